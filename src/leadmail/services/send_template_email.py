"""Use case: a template filled with the client's variables, one message per recipient."""

from __future__ import annotations

from leadmail.domain.email import OutgoingEmail, check_subject
from leadmail.services.addressing import (
    Addressing,
    SendPlan,
    TemplateEmailRequest,
    checked_key,
    flagged,
)
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult
from leadmail.services.templates import TemplateService


class SendTemplateEmail:
    def __init__(self, addressing: Addressing, templates: TemplateService, outbox: Outbox) -> None:
        self._addressing = addressing
        self._templates = templates
        self._outbox = outbox

    async def __call__(
        self, account_id: str, request: TemplateEmailRequest, idempotency_key: str | None = None
    ) -> SendResult:
        """One message per recipient, so recipients never see each other, sent
        concurrently. Raises as SendEmail does, and TemplateNotFound."""
        key = checked_key(idempotency_key)
        to, sender = self._addressing.addresses(request.to, request.sender)
        template = await self._templates.get(request.template_id)
        rendered = template.render(request.variables)
        subject = check_subject(rendered.subject)
        plan = SendPlan(
            operation="template",
            canonical=lambda: flagged(
                {
                    "to": [m.formatted() for m in to],
                    "template_id": template.template_id,
                    "variables": {name: request.variables[name] for name in template.variables},
                    "from": sender.formatted(),
                },
                request.transactional,
                request.list_unsubscribe,
            ),
            emails=tuple(
                OutgoingEmail(sender=sender, to=(box,), subject=subject, html=rendered.html)
                for box in to
            ),
            template_id=template.template_id,
            transactional=request.transactional,
            list_unsubscribe=request.list_unsubscribe,
        )
        return await self._outbox.send(account_id, plan, key)
