"""Use cases: an account's own templates and layouts written, changed (each change the
next version) and deleted, held to the rules of domain/template_drafts.py. Reading and
rendering them is services/templates.py's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import FieldError, TemplateNotFound, ValidationFailed
from leadmail.domain.template_drafts import (
    MAX_TEMPLATES,
    TemplateDraft,
    TemplateExists,
    TemplateInUse,
    TemplateReadOnly,
    first_version,
    generated_id,
    id_errors,
    next_version,
)
from leadmail.domain.templates import Template, TemplateKind
from leadmail.ports.templates import AccountTemplateRepository
from leadmail.services.templates import TemplateService, TemplateView

# The campaigns of an account that have not finished and use a template.
CampaignUses = Callable[[str, str], Awaitable[list[str]]]
# A change that loses a race with another (both read version n) reads and tries again.
CHANGE_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class TemplateChange:
    """A PUT: each field given replaces the stored one; None leaves it (``text`` and
    ``layout_id`` are cleared with ``clear``)."""

    name: str | None = None
    subject: str | None = None
    html: str | None = None
    text: str | None = None
    layout_id: str | None = None
    inline_css: bool | None = None
    clear: frozenset[str] = frozenset()  # "text", "layout_id": set to none

    def applied(self, draft: TemplateDraft) -> TemplateDraft:
        return TemplateDraft(
            name=draft.name if self.name is None else self.name,
            subject=draft.subject if self.subject is None else self.subject,
            html=draft.html if self.html is None else self.html,
            text=None if "text" in self.clear else _given(self.text, draft.text),
            layout_id=None
            if "layout_id" in self.clear
            else _given(self.layout_id, draft.layout_id),
            kind=draft.kind,
            inline_css=draft.inline_css if self.inline_css is None else self.inline_css,
        )


def _given(value: str | None, stored: str | None) -> str | None:
    return stored if value is None else value


class TemplateAuthoring:
    def __init__(
        self,
        templates: TemplateService,
        own: AccountTemplateRepository,
        campaign_uses: CampaignUses,
        clock: Clock = utc_now,
    ) -> None:
        """``campaign_uses``: CampaignRepository.using."""
        self._templates = templates
        self._own = own
        self._campaign_uses = campaign_uses
        self._clock = clock

    async def create(
        self, account_id: str, draft: TemplateDraft, template_id: str | None = None
    ) -> TemplateView:
        """Store a first version. Raises ValidationFailed (every broken rule),
        TemplateExists (the account's, or a predefined template's id)."""
        errors = [] if template_id is None else id_errors(template_id)
        errors += draft.errors()
        errors += await self._layout_errors(account_id, draft)
        if errors:
            raise ValidationFailed(errors)
        template_id = template_id if template_id is not None else generated_id(draft.name)
        if template_id in {t.template_id for t in await self._templates.predefined()}:
            raise TemplateExists(template_id, predefined=True)
        template = first_version(account_id, template_id, draft, self._clock())
        await self._own.create(template, MAX_TEMPLATES)
        return await self._templates.view_of(account_id, template)

    async def change(
        self, account_id: str, template_id: str, change: TemplateChange
    ) -> TemplateView:
        """Store the next version. Raises TemplateNotFound, TemplateReadOnly,
        ValidationFailed."""
        for _ in range(CHANGE_ATTEMPTS):
            current = await self._writable(account_id, template_id)
            draft = change.applied(TemplateDraft.of(current))
            errors = [*draft.errors(), *await self._layout_errors(account_id, draft)]
            if errors:
                raise ValidationFailed(errors)
            changed = next_version(current, draft, self._clock())
            if await self._own.replace(changed):
                return await self._templates.view_of(account_id, changed)
        raise ValidationFailed(  # another client changes it at every attempt
            [FieldError("id", "is being changed by another request: try again")]
        )

    async def delete(self, account_id: str, template_id: str) -> None:
        """Raises TemplateNotFound, TemplateReadOnly, TemplateInUse (campaigns that have
        not ended use it; or, a layout, templates name it)."""
        template = await self._writable(account_id, template_id)
        campaigns = await self._campaign_uses(account_id, template_id)
        if campaigns:
            raise TemplateInUse(template_id, campaigns, "campaigns")
        if template.kind is TemplateKind.LAYOUT:
            users = await self._own.layout_users(account_id, template_id)
            if users:
                raise TemplateInUse(template_id, users, "templates")
        if not await self._own.delete(account_id, template_id):
            raise TemplateNotFound(template_id)

    async def _writable(self, account_id: str, template_id: str) -> Template:
        template = await self._templates.get(account_id, template_id)
        if template.predefined:
            raise TemplateReadOnly(template_id)
        return template

    async def _layout_errors(self, account_id: str, draft: TemplateDraft) -> list[FieldError]:
        if draft.layout_id is None or draft.kind is TemplateKind.LAYOUT:
            return []
        layout = await self._own.get(account_id, draft.layout_id)
        if layout is None or layout.kind is not TemplateKind.LAYOUT:
            return [FieldError("layout_id", f"names no layout of yours: {draft.layout_id!r}")]
        return []
