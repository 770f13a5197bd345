"""/api/v1/email: templates, sending, and the messages sent."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, Response, get, post
from litestar.params import HeaderParameter, JSONBody, Parameter

from leadmail.adapters.http.answers import JsonAnswer, sent_message
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    MessageEnvelope,
    MessageListEnvelope,
    MessagePageEnvelope,
    SendRejectedEnvelope,
    SendUnavailableEnvelope,
    TemplateListEnvelope,
    TemplateSendRejectedEnvelope,
    TemplateSendUnavailableEnvelope,
)
from leadmail.adapters.http.flags import check_flags
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.path_ids import MessageId
from leadmail.adapters.http.schemas import (
    MessageOut,
    MessagePageOut,
    MessagesOut,
    SendEmailIn,
    SendTemplateIn,
)
from leadmail.adapters.http.templates import template_list
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import MessageNotFound, TemplateNotFound, ValidationFailed
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from leadmail.domain.message_listing import STATUS_WINDOW, MessageQuery
from leadmail.domain.suppressions import RecipientSuppressed
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.services.addressing import PlainEmailRequest, TemplateEmailRequest
from leadmail.services.messages import MessageService
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
    SenderNotAllowed,
    IdempotencyKeyReused,
    IdempotencyInProgress,
    DeliveryRejected,
    DeliveryUnavailable,
)


MESSAGE_LOG_TEXT = (
    "The account's messages, newest first, each as getMessage gives it (with its events)."
    " Cursor pagination: pass `next_cursor` back as `cursor` until it is null; `limit` is"
    " 1-100. Every filter given must match. `to`, `template_id`, `campaign_id` and the"
    " time bounds are served by indexes: a page costs the same however long the log is."
    f" `status` is not indexed: a page with it looks at most {STATUS_WINDOW:,} messages"
    " (those the other filters select) and may come back short, even empty, with a"
    " `next_cursor` to go on from."
)


_LOG_FILTERS = (
    "cursor",
    "to",
    "status",
    "template_id",
    "campaign_id",
    "created_after",
    "created_before",
)


def _once(request: AuthedRequest, name: str) -> str | None:
    """A query parameter's one value as sent; None when absent, 422 when repeated."""
    given = request.query_params.getall(name, [])
    if len(given) > 1:
        raise ValidationFailed.one(name, "may be given only once")
    return given[0] if given else None


def _replay_headers(result: SendResult) -> dict[str, str]:
    return {REPLAYED_HEADER: "true"} if result.replayed else {}


class EmailController(DiscoverableController):
    path = "/api/v1/email"
    tags = ["email"]
    # Bound by build_app, as LeadController's service.
    templates: ClassVar[TemplateService]
    messages: ClassVar[MessageService]
    send_email: ClassVar[SendEmail]
    send_template_email: ClassVar[SendTemplateEmail]

    # First: they replace Litestar's automatic OPTIONS (see discovery.py).
    template_options = options_for("/template", "GET", "POST")
    send_options = options_for("/send", "POST")
    send_template_options = options_for("/send-template", "POST")
    message_options = options_for("/messages/{message_id:str}", "GET")
    messages_options = options_for("/messages", "GET")

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

    @get(
        "/messages",
        summary="List the messages sent: the message log",
        description=MESSAGE_LOG_TEXT,
        operation_id="listMessages",
        responses=error_responses(ValidationFailed),
    )
    async def list_messages(
        self,
        request: AuthedRequest,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(
                description=(
                    "`next_cursor` of the previous page, as it came: a position,"
                    " `<microseconds since 1970>.<message id>`, after which the page starts"
                )
            ),
        ] = None,
        to: Annotated[
            str | None,
            Parameter(
                description=(
                    "Messages that went to this address (any case; `Ada <ada@example.com>`"
                    " reads as `ada@example.com`)"
                ),
            ),
        ] = None,
        status: Annotated[
            str | None,
            Parameter(description="Messages in this status (not indexed: see above)"),
        ] = None,
        template_id: Annotated[
            str | None,
            Parameter(description="Messages made from this template", pattern=TEMPLATE_ID.pattern),
        ] = None,
        campaign_id: Annotated[
            str | None,
            Parameter(description="Messages of this campaign"),
        ] = None,
        created_after: Annotated[
            str | None, Parameter(description="RFC 3339: created strictly after this moment")
        ] = None,
        created_before: Annotated[
            str | None, Parameter(description="RFC 3339: created strictly before this moment")
        ] = None,
    ) -> MessagePageEnvelope:
        # The filters as sent (Litestar reads `null` as no value): the parameters above
        # document them.
        given = {name: _once(request, name) for name in _LOG_FILTERS}
        query = MessageQuery.parse(limit=limit, **given)
        page = await self.messages.list(request.user.account_id, query)
        return MessagePageEnvelope.of("Messages retrieved", MessagePageOut.of(page))

    @get(
        "/messages/{message_id:str}",
        summary="Get a message: what became of it",
        description=(
            "The message, and in `events` what its provider reported of it since (delivered,"
            " deferred, bounced hard or soft, complained, opened, clicked), oldest first."
            " `status` moves sent -> delivered -> bounced -> complained, never backwards."
        ),
        operation_id="getMessage",
        responses=error_responses(MessageNotFound),
    )
    async def get_message(
        self,
        request: AuthedRequest,
        message_id: MessageId,
    ) -> MessageEnvelope:
        message, events = await self.messages.get_with_events(request.user.account_id, message_id)
        return MessageEnvelope.of("Message retrieved", MessageOut.of(message, events))

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
