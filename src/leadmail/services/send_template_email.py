"""Use case: a template filled with the client's variables, one message per recipient."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from leadmail.domain.email import Mailbox, OutgoingEmail, check_subject
from leadmail.domain.templates import Template, check_variables_size
from leadmail.domain.unsubscribe import UNSUBSCRIBE_URL, unsubscribe_headers
from leadmail.services.addressing import (
    Addressing,
    SendPlan,
    TemplateEmailRequest,
    checked_key,
    flagged,
    given_parts,
)
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult
from leadmail.services.templates import TemplateService
from leadmail.services.unsubscribes import Unsubscribes


class SendTemplateEmail:
    def __init__(
        self,
        addressing: Addressing,
        templates: TemplateService,
        outbox: Outbox,
        links: Unsubscribes,
    ) -> None:
        self._addressing = addressing
        self._templates = templates
        self._outbox = outbox
        self._links = links

    async def __call__(
        self, account_id: str, request: TemplateEmailRequest, idempotency_key: str | None = None
    ) -> SendResult:
        """One message per recipient, so recipients never see each other, sent
        concurrently. Raises as SendEmail does, and TemplateNotFound. With
        ``list_unsubscribe``, each message carries its recipient's own RFC 8058 headers;
        a template's ``{{unsubscribe_url}}`` is that recipient's link, whatever the
        request's ``variables`` say (a client never gives it)."""
        key = checked_key(idempotency_key)
        check_variables_size(request.variables)
        to, sender, reply_to = self._addressing.addresses(
            request.to, request.sender, request.reply_to
        )
        template = await self._templates.sendable(account_id, request.template_id)
        given = template.client_variables
        plan = SendPlan(
            operation="template",
            canonical=lambda: flagged(
                {
                    "to": [m.formatted() for m in to],
                    "template_id": template.template_id,
                    "variables": {name: request.variables[name] for name in given},
                    "from": sender.formatted(),
                    **given_parts(None, reply_to),
                },
                request.transactional,
                request.list_unsubscribe,
            ),
            emails=await self._emails(account_id, request, template, to, sender, reply_to),
            template_id=template.template_id,
            template_version=template.version,
            test=request.test,
            transactional=request.transactional,
            list_unsubscribe=request.list_unsubscribe,
        )
        return await self._outbox.send(account_id, plan, key)

    async def _emails(
        self,
        account_id: str,
        request: TemplateEmailRequest,
        template: Template,
        to: Sequence[Mailbox],
        sender: Mailbox,
        reply_to: Mailbox | None,
    ) -> tuple[OutgoingEmail, ...]:
        """Each recipient's message: rendered once for them all, unless the template
        holds a link of each recipient's own."""
        values: Mapping[str, str] = request.variables
        per_recipient = UNSUBSCRIBE_URL in template.variables
        if not per_recipient:
            rendered = template.render(values)
            subject = check_subject(rendered.subject)
            if not request.list_unsubscribe:
                return tuple(
                    OutgoingEmail(
                        sender=sender, to=(box,), subject=subject, html=rendered.html,
                        reply_to=reply_to, text=rendered.text,
                    )
                    for box in to
                )  # fmt: skip
        links = self._links
        await links.ready()
        compiled = template.compiled()
        emails: list[OutgoingEmail] = []
        for box in to:
            url = links.url(account_id, box.address)
            if per_recipient:
                rendered = compiled.render({**values, UNSUBSCRIBE_URL: url})
                subject = check_subject(rendered.subject)
            emails.append(
                OutgoingEmail(
                    sender=sender,
                    to=(box,),
                    subject=subject,
                    html=rendered.html,
                    reply_to=reply_to,
                    headers=unsubscribe_headers(url) if request.list_unsubscribe else (),
                    text=rendered.text,
                )
            )
        return tuple(emails)
