from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.domain.email import Message
from leadmail.domain.message_events import MessageEvent, status_after, stored_forms
from leadmail.ports.message_events import MessageEventRepository


class MemoryMessageEventRepository(MessageEventRepository):
    """Events beside the memory message store, whose messages' statuses they move. One
    event loop, and the event is stored before anything is awaited: two applies of one
    event store it once."""

    def __init__(self, messages: MemoryMessageRepository) -> None:
        self._messages = messages
        self._events: dict[tuple[str, str], MessageEvent] = {}  # in the order stored

    async def find_message(self, provider: str, provider_message_id: str) -> Message | None:
        forms = stored_forms(provider_message_id)
        found = [
            m
            for m in self._messages.stored()
            if m.provider == provider and m.provider_message_id in forms
        ]
        return min(found, key=lambda m: m.created_at) if found else None

    async def seen(self, provider: str, event_id: str) -> bool:
        return (provider, event_id) in self._events

    async def apply(self, event: MessageEvent, now: datetime) -> bool:
        key = (event.provider, event.event_id)
        if key in self._events:
            return False
        self._events[key] = event
        message = await self._messages.get(event.account_id, event.message_id)
        if message is not None:
            status = status_after(message.status, event.moves_to)
            if status is not message.status:
                self._messages.replace(replace(message, status=status, updated_at=now))
        return True

    async def list_many(
        self, account_id: str, message_ids: Sequence[str]
    ) -> dict[str, list[MessageEvent]]:
        found: dict[str, list[MessageEvent]] = {}
        for message_id in dict.fromkeys(message_ids):
            if events := await self.list(account_id, message_id):
                found[message_id] = events
        return found

    async def list(self, account_id: str, message_id: str) -> list[MessageEvent]:
        # sorted() is stable: events of one moment stay in the order stored.
        found = [
            e
            for e in self._events.values()
            if e.account_id == account_id and e.message_id == message_id
        ]
        return sorted(found, key=lambda e: e.at)
