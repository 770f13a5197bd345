"""Use cases: the template catalog, synced into storage and served from memory.

Templates change only when they are written (today: ``sync``, at start-up), so reads are
served from a snapshot of the stored set, taken on the first read after a write. Every
write goes through this class and ends in ``_written``, the one place that drops the
snapshot: a method that edits templates (when they become editable) calls it too. A write
by another process is seen after this one's next write or restart; editable templates on
several servers will need the snapshot dropped on a notification, as the API keys' cache
does (adapters/db/key_cache.py).
"""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import TemplateNotFound
from leadmail.domain.templates import Template
from leadmail.ports.templates import TemplateCatalog, TemplateRepository

# The stored templates in id order, and by id.
Snapshot = tuple[list[Template], dict[str, Template]]


class TemplateService:
    def __init__(
        self, catalog: TemplateCatalog, templates: TemplateRepository, clock: Clock = utc_now
    ) -> None:
        self._catalog = catalog
        self._templates = templates
        self._clock = clock
        self._snapshot: Snapshot | None = None
        # Bumped by every write: a read that began before one must not keep what it read.
        self._generation = 0

    async def sync(self) -> int:
        """Store the catalog's templates (idempotent); the number of templates."""
        sources = self._catalog.load()
        try:
            await self._templates.sync(sources, self._clock())
        finally:
            self._written()
        return len(sources)

    async def list(self) -> list[Template]:
        """Ordered by template id. The caller must not change the list."""
        return (await self._read())[0]

    async def get(self, template_id: str) -> Template:
        template = (await self._read())[1].get(template_id)
        if template is None:
            raise TemplateNotFound(template_id)
        return template

    def _written(self) -> None:
        self._generation += 1
        self._snapshot = None

    async def _read(self) -> Snapshot:
        snapshot = self._snapshot
        if snapshot is not None:
            return snapshot
        generation = self._generation
        stored = await self._templates.list()
        snapshot = (stored, {t.template_id: t for t in stored})
        if generation == self._generation:
            self._snapshot = snapshot
        return snapshot
