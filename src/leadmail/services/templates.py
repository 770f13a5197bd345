"""Use cases: the templates an account can send, read and rendered as sends render them.
The predefined ones (the file catalog, synced into storage, read-only over the API) and
the account's own (written by services/template_authoring.py, each change a version).

Predefined templates change only when the catalog is synced (at start-up), so they are
served from a snapshot of the stored set, taken on the first read after a sync. A sync by
another process is seen after this one's next sync or restart.

An account's own are read from storage on every use, so an edit is seen by the next send
whichever process made it. What a send renders (the template inside its layout, its CSS
inlined) is made once per version of the template and of its layout and kept, so a send on
an account's template costs one read of the current version more than a predefined one.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import TemplateNotFound
from leadmail.domain.templates import CONTENT, Template, TemplateKind, as_sent, composed
from leadmail.ports.templates import (
    AccountTemplateRepository,
    TemplateCatalog,
    TemplateRepository,
)

# The stored predefined templates in id order, and by id.
Snapshot = tuple[list[Template], dict[str, Template]]
# Sendable forms kept, by the versions they are made of (a template deleted and made again
# starts again at version 1: the moment each version was made tells them apart).
SENT_FORMS_KEPT = 1024


@dataclass(frozen=True, slots=True)
class TemplateView:
    """A template as stored, and the variables a send of it must give values for (its
    layout's among them; never ``unsubscribe_url``, nor a layout's ``content``)."""

    template: Template
    variables: tuple[str, ...]

    @classmethod
    def of(cls, template: Template, layout: Template | None) -> TemplateView:
        names = composed(template, layout).client_variables
        if template.kind is TemplateKind.LAYOUT:
            names = tuple(name for name in names if name != CONTENT)
        return cls(template, names)


class TemplateService:
    def __init__(
        self,
        catalog: TemplateCatalog,
        templates: TemplateRepository,
        own: AccountTemplateRepository,
        clock: Clock = utc_now,
    ) -> None:
        self._catalog = catalog
        self._templates = templates
        self._own = own
        self._clock = clock
        self._snapshot: Snapshot | None = None
        # Bumped by every sync: a read that began before one must not keep what it read.
        self._generation = 0
        self._sent: OrderedDict[tuple[object, ...], Template] = OrderedDict()

    # The catalog.

    async def sync(self) -> int:
        """Store the catalog's templates (idempotent); the number of templates."""
        sources = self._catalog.load()
        try:
            await self._templates.sync(sources, self._clock())
        finally:
            self._generation += 1
            self._snapshot = None
        return len(sources)

    async def predefined(self) -> list[Template]:
        """Ordered by template id. The caller must not change the list."""
        return (await self._read())[0]

    # Reading.

    async def get(self, account_id: str, template_id: str) -> Template:
        """A template as stored, the account's own before a predefined one of that id (one
        added to the catalog after the account chose the id)."""
        own = await self._own.get(account_id, template_id)
        if own is not None:
            return own
        template = (await self._read())[1].get(template_id)
        if template is None:
            raise TemplateNotFound(template_id)
        return template

    async def version(self, account_id: str, template_id: str, version: int) -> Template:
        """One version of a template the account can use. Raises TemplateNotFound (the
        template, or that version of it)."""
        current = await self.get(account_id, template_id)
        found = (
            await self._templates.version(template_id, version)
            if current.predefined
            else await self._own.version(account_id, template_id, version)
        )
        if found is None:
            raise TemplateNotFound(template_id, version)
        return found

    async def versions(
        self, account_id: str, template_id: str, limit: int, before: int | None = None
    ) -> list[Template]:
        """Newest first, up to ``limit``, older than ``before`` when given."""
        current = await self.get(account_id, template_id)
        if not current.predefined:
            return await self._own.versions(account_id, template_id, limit, before)
        start = current.version if before is None else min(before - 1, current.version)
        found = [
            await self._templates.version(template_id, n)
            for n in range(start, max(0, start - limit), -1)
        ]
        return [v for v in found if v is not None]

    async def view(self, account_id: str, template_id: str) -> TemplateView:
        return await self.view_of(account_id, await self.get(account_id, template_id))

    async def own(self, account_id: str) -> list[TemplateView]:
        """The account's own templates and layouts, in id order."""
        own = await self._own.list(account_id)
        layouts = {t.template_id: t for t in own if t.kind is TemplateKind.LAYOUT}
        return [
            TemplateView.of(t, None if t.layout_id is None else layouts.get(t.layout_id))
            for t in own
        ]

    async def view_of(self, account_id: str, template: Template) -> TemplateView:
        layout = None
        if template.layout_id is not None:
            layout = await self._own.get(account_id, template.layout_id)
        return TemplateView.of(template, layout)

    async def version_views(
        self, account_id: str, template_id: str, limit: int, before: int | None = None
    ) -> list[TemplateView]:
        """As versions, each with its variables (in its layout as the layout is now)."""
        found = await self.versions(account_id, template_id, limit, before)
        return [await self.view_of(account_id, v) for v in found]

    # Sending.

    async def sendable(self, account_id: str, template_id: str) -> Template:
        """The template as a send renders it now: inside its layout, CSS inlined. A
        layout is not sendable (TemplateNotFound names it as no template to send)."""
        template = await self.get(account_id, template_id)
        if template.kind is TemplateKind.LAYOUT:
            raise TemplateNotFound(template_id)
        layout = None
        if template.layout_id is not None:
            layout = await self._own.get(account_id, template.layout_id)
        return self._as_sent(account_id, template, layout)

    async def sendable_version(
        self, account_id: str, template_id: str, version: int, layout_version: int | None
    ) -> Template:
        """A frozen version (a campaign's), inside the frozen version of its layout."""
        template = await self.version(account_id, template_id, version)
        layout = None
        if template.layout_id is not None and layout_version is not None:
            layout = await self._own.version(account_id, template.layout_id, layout_version)
            if layout is None:
                raise TemplateNotFound(template.layout_id, layout_version)
        return self._as_sent(account_id, template, layout)

    async def sendable_now(self, account_id: str, template: Template) -> Template:
        """``template`` (any version of it) as a send would render it now: inside its
        layout's current version."""
        layout = None
        if template.layout_id is not None:
            layout = await self._own.get(account_id, template.layout_id)
        return self._as_sent(account_id, template, layout)

    async def frozen(self, account_id: str, template_id: str) -> tuple[Template, int | None]:
        """The template as stored now, and its layout's version (a campaign starting)."""
        template = await self.get(account_id, template_id)
        if template.layout_id is None:
            return template, None
        layout = await self._own.get(account_id, template.layout_id)
        if layout is None:
            raise TemplateNotFound(template.layout_id)
        return template, layout.version

    def _as_sent(self, account_id: str, template: Template, layout: Template | None) -> Template:
        key: tuple[object, ...] = (
            account_id,
            template.template_id,
            template.version,
            template.changed_at,
        )
        if layout is not None:
            key += (layout.template_id, layout.version, layout.changed_at)
        sent = self._sent.get(key)
        if sent is not None:
            self._sent.move_to_end(key)
            return sent
        sent = as_sent(template, layout)
        self._sent[key] = sent
        if len(self._sent) > SENT_FORMS_KEPT:
            self._sent.popitem(last=False)
        return sent

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

    # Last: in the class body, the name ``list`` is this method from here on.

    async def list(self, account_id: str) -> list[Template]:
        """The predefined templates, then the account's own, each in id order."""
        return [*await self.predefined(), *await self._own.list(account_id)]
