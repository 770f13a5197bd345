from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from leadmail.domain.email import Message

DUPLICATE_MESSAGE = "A message with this id is already stored"


class MessageRepository(Protocol):
    """Every message the service was asked to send, and what became of it.

    Written before the provider is called, so nothing is sent unrecorded. Raises
    StorageUnavailable."""

    async def add(self, messages: Sequence[Message]) -> None:
        """Store new messages (status pending), all or none."""
        ...

    async def update(self, messages: Sequence[Message]) -> None:
        """Store the new status, attempts, provider id, last error and updated_at of these
        messages, found by their ids (ours, unique across accounts)."""
        ...

    async def get(self, account_id: str, message_id: str) -> Message | None: ...

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[Message]:
        """The messages of this account among ``message_ids``, in the order asked."""
        ...
