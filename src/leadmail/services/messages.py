"""Use case: what became of a message (the caller's own only)."""

from __future__ import annotations

from leadmail.domain.email import Message
from leadmail.domain.errors import MessageNotFound
from leadmail.ports.messages import MessageRepository


class MessageService:
    def __init__(self, messages: MessageRepository) -> None:
        self._messages = messages

    async def get(self, account_id: str, message_id: str) -> Message:
        message = await self._messages.get(account_id, message_id)
        if message is None:
            raise MessageNotFound(message_id)
        return message
