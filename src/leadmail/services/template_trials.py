"""Use cases: a template tried before it is sent to anyone. A preview renders it exactly
as a send would and lists what is missing instead of failing on it; a test send mails one
address through every rule of a normal send, marked as a test in the message log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from leadmail.domain.errors import LeadNotFound, TemplateNotFound
from leadmail.domain.lead_variables import template_variables
from leadmail.domain.templates import Template, TemplateKind, check_variables_size
from leadmail.domain.unsubscribe import SERVICE_VARIABLES, UNSUBSCRIBE_URL
from leadmail.ports.leads import LeadRepository
from leadmail.services.addressing import TemplateEmailRequest
from leadmail.services.results import SendResult
from leadmail.services.send_template_email import SendTemplateEmail
from leadmail.services.templates import TemplateService
from leadmail.services.unsubscribes import Unsubscribes

# Whose link a preview without a lead shows (a link of the account's, for this address).
PREVIEW_ADDRESS = "preview@example.com"


@dataclass(frozen=True, slots=True)
class Preview:
    template: Template  # the version rendered, as stored
    subject: str
    html: str
    text: str | None
    missing: tuple[str, ...]  # variables no value was given for: shown as {{name}}


class TemplateTrials:
    def __init__(
        self,
        templates: TemplateService,
        leads: LeadRepository,
        links: Unsubscribes,
        send: SendTemplateEmail,
    ) -> None:
        self._templates = templates
        self._leads = leads
        self._links = links
        self._send = send

    async def preview(
        self,
        account_id: str,
        template_id: str,
        variables: Mapping[str, str],
        lead_id: str | None = None,
        version: int | None = None,
    ) -> Preview:
        """The template (its current version, or ``version``) rendered as a send renders
        it now (its layout's current version, CSS inlined, the text part), filled with
        ``variables`` and, over them, the lead's own values (as a campaign fills them).
        Raises TemplateNotFound, LeadNotFound, ValidationFailed (a value the subject
        cannot take)."""
        stored = (
            await self._templates.get(account_id, template_id)
            if version is None
            else await self._templates.version(account_id, template_id, version)
        )
        if stored.kind is TemplateKind.LAYOUT:
            raise TemplateNotFound(template_id)  # a layout is previewed through a template
        sent = await self._templates.sendable_now(account_id, stored)
        values, address = await self._values(account_id, variables, lead_id)
        compiled = sent.compiled()
        if UNSUBSCRIBE_URL in compiled.variables:
            await self._links.ready()
            values[UNSUBSCRIBE_URL] = self._links.url(account_id, address or PREVIEW_ADDRESS)
        missing = tuple(
            name
            for name in compiled.variables
            if name not in values and name not in SERVICE_VARIABLES
        )
        shown = {**values, **{name: f"{{{{{name}}}}}" for name in missing}}
        rendered = compiled.render(shown)
        return Preview(stored, rendered.subject, rendered.html, rendered.text, missing)

    async def test(
        self,
        account_id: str,
        template_id: str,
        to: str,
        variables: Mapping[str, str],
        lead_id: str | None = None,
        sender: str | None = None,
    ) -> SendResult:
        """One message of the template's current version to ``to``, filled as a preview
        is (a variable without a value shows as ``{{name}}``), through every rule of a
        normal send (the suppression list, the sender rules), recorded with ``test``.
        Raises as a template send does, and LeadNotFound."""
        values, _ = await self._values(account_id, variables, lead_id)
        sent = await self._templates.sendable(account_id, template_id)
        for name in sent.compiled().variables:
            if name not in values and name not in SERVICE_VARIABLES:
                values[name] = f"{{{{{name}}}}}"
        request = TemplateEmailRequest(
            to=to, template_id=template_id, variables=values, sender=sender, test=True
        )
        return await self._send(account_id, request)

    async def _values(
        self, account_id: str, variables: Mapping[str, str], lead_id: str | None
    ) -> tuple[dict[str, str], str | None]:
        check_variables_size(variables)
        values = dict(variables)
        if lead_id is None:
            return values, None
        lead = await self._leads.get(account_id, lead_id)
        if lead is None:
            raise LeadNotFound(lead_id)
        return {**values, **template_variables(lead)}, lead.email
