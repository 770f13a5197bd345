"""Where the providers' events about our messages are kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.email import Message
from leadmail.domain.message_events import MessageEvent


class MessageEventRepository(Protocol):
    """Each provider event stored once per (provider, event id), with the status it moves
    its message to. Raises StorageUnavailable when the store cannot be reached."""

    async def find_message(self, provider: str, provider_message_id: str) -> Message | None:
        """The message handed to ``provider`` that it gave this id (in provider_message_key's
        form; stored as its answer gave it: domain.message_events.stored_forms), whatever
        its account, found through an index; None when there is none."""
        ...

    async def seen(self, provider: str, event_id: str) -> bool:
        """Whether an event of ``provider`` with this id is stored."""
        ...

    async def apply(self, event: MessageEvent, now: datetime) -> bool:
        """Store ``event`` unless one of its provider with its event id is stored, and then,
        in the same transaction, move its message's status to ``event.moves_to`` when the
        message's status is one of ``moves_from`` it (``updated_at`` = ``now``). Whether it
        was stored now: a replay changes nothing and answers False, and two applies of one
        event at once store it, and move its message, once."""
        ...

    async def list_many(
        self, account_id: str, message_ids: Sequence[str]
    ) -> dict[str, list[MessageEvent]]:
        """``list`` for each of the account's messages among ``message_ids``, in one read:
        by message id, those with events only."""
        ...

    async def list(self, account_id: str, message_id: str) -> list[MessageEvent]:
        """The events of the account's message, oldest first (by ``at``, then as stored)."""
        ...
