from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from leadmail.domain.email import Message
from leadmail.domain.message_listing import MessageQuery, MessageRows
from leadmail.domain.suppressions import Suppression, SuppressionCheck

DUPLICATE_MESSAGE = "A message with this id is already stored"


class MessageRepository(Protocol):
    """Every message the service was asked to send, and what became of it.

    Written before the provider is called, so nothing is sent unrecorded. Raises
    StorageUnavailable."""

    async def add(self, messages: Sequence[Message]) -> None:
        """Store new messages (status pending), all or none."""
        ...

    async def add_unless_suppressed(
        self, messages: Sequence[Message], check: SuppressionCheck
    ) -> list[Suppression]:
        """Store ``messages`` (of ``check.account_id``) as ``add`` does, in one step with the
        suppression check: unless the account's suppression list holds one of
        ``check.digests`` (as ``check.transactional`` reads it), in which case nothing is
        stored and those entries are returned. [] means they were stored. (A plain send's
        record and policy in one round trip: bench/README.md, issue 25.)"""
        ...

    async def update(self, messages: Sequence[Message]) -> None:
        """Store the new status, attempts, provider id, last error and updated_at of these
        messages, found by their ids (ours, unique across accounts)."""
        ...

    async def get(self, account_id: str, message_id: str) -> Message | None: ...

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[Message]:
        """The messages of this account among ``message_ids``, in the order asked."""
        ...

    async def list(self, account_id: str, query: MessageQuery, window: int) -> MessageRows:
        """The account's messages matching ``query.filter`` after ``query.after``, newest
        first (``created_at``, then id, descending): up to ``query.limit + 1`` of them.
        With a ``status`` filter it walks at most ``window`` messages that match the other
        filters, and says where it stopped when that ran out first (``walked_to``)."""
        ...
