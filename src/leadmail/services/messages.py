"""Use case: what became of a message (the caller's own only)."""

from __future__ import annotations

from dataclasses import dataclass

from leadmail.domain.email import Message
from leadmail.domain.errors import MessageNotFound
from leadmail.domain.message_events import MessageEvent
from leadmail.domain.message_listing import STATUS_WINDOW, MessageQuery, page_of
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.messages import MessageRepository


@dataclass(frozen=True, slots=True)
class MessageLogPage:
    """A page of the message log: each message with its events, and the next cursor."""

    items: list[tuple[Message, list[MessageEvent]]]
    next_cursor: str | None


class MessageService:
    def __init__(self, messages: MessageRepository, events: MessageEventRepository) -> None:
        self._messages = messages
        self._events = events

    async def get(self, account_id: str, message_id: str) -> Message:
        message = await self._messages.get(account_id, message_id)
        if message is None:
            raise MessageNotFound(message_id)
        return message

    async def get_with_events(
        self, account_id: str, message_id: str
    ) -> tuple[Message, list[MessageEvent]]:
        """The message and what its provider reported of it (webhooks), oldest first."""
        message = await self.get(account_id, message_id)
        return message, await self._events.list(account_id, message_id)

    async def list(self, account_id: str, query: MessageQuery) -> MessageLogPage:
        """The account's messages, newest first, a page at a time (domain/message_listing:
        a page with a ``status`` filter may be short and still have a next cursor)."""
        rows = await self._messages.list(account_id, query, STATUS_WINDOW)
        page = page_of(rows, query.limit)
        events = await self._events.list_many(account_id, [m.message_id for m in page.messages])
        return MessageLogPage(
            [(m, events.get(m.message_id, [])) for m in page.messages], page.next_cursor
        )
