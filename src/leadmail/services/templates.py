"""Use cases: the template catalog, synced into storage and read from there."""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import TemplateNotFound
from leadmail.domain.templates import Template
from leadmail.ports.templates import TemplateCatalog, TemplateRepository


class TemplateService:
    def __init__(
        self, catalog: TemplateCatalog, templates: TemplateRepository, clock: Clock = utc_now
    ) -> None:
        self._catalog = catalog
        self._templates = templates
        self._clock = clock

    async def sync(self) -> int:
        """Store the catalog's templates (idempotent); the number of templates."""
        sources = self._catalog.load()
        await self._templates.sync(sources, self._clock())
        return len(sources)

    async def list(self) -> list[Template]:
        return await self._templates.list()

    async def get(self, template_id: str) -> Template:
        template = await self._templates.get(template_id)
        if template is None:
            raise TemplateNotFound(template_id)
        return template
