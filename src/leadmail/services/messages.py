"""Use case: what became of a message (the caller's own only)."""

from __future__ import annotations

from leadmail.domain.email import Message
from leadmail.domain.errors import MessageNotFound
from leadmail.domain.message_events import MessageEvent
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.messages import MessageRepository


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
