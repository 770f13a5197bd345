"""/api/v1/email/messages: the message log, and one message with what became of it."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, get
from litestar.params import Parameter

from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import MessageEnvelope, MessagePageEnvelope
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import Limit, MessageCursor
from leadmail.adapters.http.path_ids import MessageId
from leadmail.adapters.http.schemas import MessageOut, MessagePageOut
from leadmail.domain.errors import MessageNotFound, ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE
from leadmail.domain.message_listing import STATUS_WINDOW, MessageQuery
from leadmail.services.messages import MessageService

AuthedRequest = Request[Principal, Any, Any]
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


class MessageController(DiscoverableController):
    path = "/api/v1/email/messages"
    tags = ["email"]
    messages: ClassVar[MessageService]  # bound by build_app

    # First: they replace Litestar's automatic OPTIONS (see discovery.py).
    log_options = options_for("/", "GET")
    message_options = options_for("/{message_id:str}", "GET")

    @get(
        "/",
        summary="List the messages sent: the message log",
        description=MESSAGE_LOG_TEXT,
        operation_id="listMessages",
        responses=error_responses(ValidationFailed),
    )
    async def list_messages(
        self,
        request: AuthedRequest,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: MessageCursor = None,
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
            Parameter(description="Messages made from this template"),
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
        "/{message_id:str}",
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
