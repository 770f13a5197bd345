"""/api/v1/email: templates and sending (the messages sent: messages.py)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, Response, get, post
from litestar.params import HeaderParameter, JSONBody

from leadmail.adapters.http.answers import JsonAnswer, sent_message
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    MessageEnvelope,
    MessageListEnvelope,
    SendRejectedEnvelope,
    SendUnavailableEnvelope,
    TemplateListEnvelope,
    TemplateSendRejectedEnvelope,
    TemplateSendUnavailableEnvelope,
)
from leadmail.adapters.http.flags import check_flags
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.schemas import (
    MessageOut,
    MessagesOut,
    SendEmailIn,
    SendTemplateIn,
)
from leadmail.adapters.http.templates import template_list
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import TemplateNotFound, ValidationFailed
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.keys import Principal
from leadmail.domain.quotas import QuotaExceeded
from leadmail.domain.suppressions import RecipientSuppressed
from leadmail.services.addressing import PlainEmailRequest, TemplateEmailRequest
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable, SendResult
from leadmail.services.send_email import SendEmail
from leadmail.services.send_template_email import SendTemplateEmail
from leadmail.services.templates import TemplateService

AuthedRequest = Request[Principal, Any, Any]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        description=(
            "Up to 256 characters, kept 24 h per account: the same key and body replay the"
            " first result without sending again; after a failure, resend only what failed."
        ),
    ),
]
REPLAYED_HEADER = "Idempotent-Replayed"
# The operations whose success may be a replay (openapi.finish documents the header).
REPLAYABLE = ("sendEmail", "sendTemplateEmail")
FLAGS = ("transactional", "list_unsubscribe")  # a send body's booleans
_SEND_ERRORS = (
    ValidationFailed,
    QuotaExceeded,
    SenderNotAllowed,
    IdempotencyKeyReused,
    IdempotencyInProgress,
    DeliveryRejected,
    DeliveryUnavailable,
)


def _replay_headers(result: SendResult) -> dict[str, str]:
    return {REPLAYED_HEADER: "true"} if result.replayed else {}


class EmailController(DiscoverableController):
    path = "/api/v1/email"
    tags = ["email"]
    # Bound by build_app, as LeadController's service.
    templates: ClassVar[TemplateService]
    send_email: ClassVar[SendEmail]
    send_template_email: ClassVar[SendTemplateEmail]

    # First: they replace Litestar's automatic OPTIONS (see discovery.py).
    template_options = options_for("/template", "GET", "POST")
    send_options = options_for("/send", "POST")
    send_template_options = options_for("/send-template", "POST")

    # The spelling the spec's samples use. Documented, as deprecated: its path also takes
    # POST (sendTemplateEmail), and the document must say which methods a path answers.
    @get(
        "/template",
        summary="List the email templates (deprecated: use GET /api/v1/email/templates)",
        operation_id="listTemplatesAlias",
        deprecated=True,
        responses=error_responses(),
    )
    async def list_templates_alias(self, request: AuthedRequest) -> Response[TemplateListEnvelope]:
        return await template_list(self.templates, request.user.account_id)

    @post(
        "/send",
        status_code=200,
        summary="Send an email",
        description=(
            "One message to every address in `to` (1-50) that is not on the account's"
            " suppression list (422 RECIPIENT_SUPPRESSED when none is left). `from` defaults"
            " to the service's default sender. 200 only once the provider accepted it."
        ),
        operation_id="sendEmail",
        responses=error_responses(
            *_SEND_ERRORS,
            RecipientSuppressed,
            body=True,
            sends=(SendRejectedEnvelope, SendUnavailableEnvelope),
        ),
    )
    async def send(
        self,
        request: AuthedRequest,
        data: JSONBody[SendEmailIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[MessageEnvelope]:
        await check_flags(request, *FLAGS)
        result = await self.send_email(
            request.user.account_id,
            PlainEmailRequest(
                to=data.to,
                subject=data.subject,
                html=data.html,
                sender=data.sender,
                transactional=data.transactional,
                list_unsubscribe=data.list_unsubscribe,
                text=data.text,
                reply_to=data.reply_to,
            ),
            idempotency_key,
        )
        return JsonAnswer(
            MessageEnvelope.of(sent_message(result), MessageOut.of(result.messages[0])),
            headers=_replay_headers(result) or None,
        )

    @post(
        "/template",
        status_code=200,
        summary="Send a template email",
        description=(
            "One message per recipient in `to` (1-50), sent concurrently; `data.messages`"
            " has each one's outcome, in the order of `to` (`suppressed`: on the account's"
            " suppression list, not sent)."
        ),
        operation_id="sendTemplateEmail",
        responses=error_responses(
            *_SEND_ERRORS,
            TemplateNotFound,
            body=True,
            sends=(TemplateSendRejectedEnvelope, TemplateSendUnavailableEnvelope),
        ),
    )
    async def send_template(
        self,
        request: AuthedRequest,
        data: JSONBody[SendTemplateIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[MessageListEnvelope]:
        return await self._send_template(request, data, idempotency_key)

    # The spelling the spec's samples use; served, left out of the document.
    @post("/send-template", status_code=200, include_in_schema=False)
    async def send_template_alias(
        self,
        request: AuthedRequest,
        data: JSONBody[SendTemplateIn],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[MessageListEnvelope]:
        return await self._send_template(request, data, idempotency_key)

    async def _send_template(
        self, request: AuthedRequest, data: SendTemplateIn, idempotency_key: str | None
    ) -> Response[MessageListEnvelope]:
        await check_flags(request, *FLAGS)
        result = await self.send_template_email(
            request.user.account_id,
            TemplateEmailRequest(
                to=data.to,
                template_id=data.template_id,
                variables=data.variables,
                sender=data.sender,
                transactional=data.transactional,
                list_unsubscribe=data.list_unsubscribe,
                reply_to=data.reply_to,
            ),
            idempotency_key,
        )
        messages = MessagesOut([MessageOut.of(m) for m in result.messages])
        return JsonAnswer(
            MessageListEnvelope.of(sent_message(result), messages),
            headers=_replay_headers(result) or None,
        )
