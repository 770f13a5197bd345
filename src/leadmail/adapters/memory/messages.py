from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from leadmail.domain.email import Message
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.message_listing import MessageFilter, MessageQuery, MessageRows
from leadmail.domain.suppressions import Suppression, SuppressionCheck
from leadmail.ports.errors import PortError
from leadmail.ports.messages import DUPLICATE_MESSAGE, MessageRepository
from leadmail.ports.suppressions import SuppressionRepository


def _without_status(wanted: MessageFilter) -> MessageFilter:
    """``wanted`` without its status: what the walk of a status listing selects."""
    return replace(wanted, status=None)


class MemoryMessageRepository(MessageRepository):
    def __init__(self, suppressions: SuppressionRepository | None = None) -> None:
        """``suppressions``: the list ``add_unless_suppressed`` reads (none: nothing is)."""
        self._records: dict[str, Message] = {}
        self._suppressions = suppressions

    def __len__(self) -> int:
        """How many messages it holds, of every account (for tests: nothing stored)."""
        return len(self._records)

    async def add(self, records: Sequence[Message]) -> None:
        ids = [record.message_id for record in records]
        if len(set(ids)) != len(ids) or any(i in self._records for i in ids):
            # As the SQL stores: a message id is the primary key, and the batch is atomic.
            raise PortError(DUPLICATE_MESSAGE)
        for record in records:
            self._records[record.message_id] = record

    async def add_unless_suppressed(
        self, records: Sequence[Message], check: SuppressionCheck
    ) -> list[Suppression]:
        if self._suppressions is not None:
            found = await self._suppressions.find(check.account_id, check.digests)
            barred = [e for e in found if e.holds(check.transactional)]
            if barred:
                return barred
        await self.add(records)
        return []

    async def update(self, records: Sequence[Message]) -> None:
        for record in records:
            stored = self._records.get(record.message_id)
            if stored is None or stored.account_id != record.account_id:
                continue
            self._records[record.message_id] = replace(
                stored,
                status=record.status,
                attempts=record.attempts,
                provider_message_id=record.provider_message_id,
                last_error=record.last_error,
                updated_at=record.updated_at,
            )

    async def get(self, account_id: str, message_id: str) -> Message | None:
        record = self._records.get(message_id)
        return record if record is not None and record.account_id == account_id else None

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[Message]:
        found = (self._records.get(message_id) for message_id in message_ids)
        return [r for r in found if r is not None and r.account_id == account_id]

    async def list(self, account_id: str, query: MessageQuery, window: int) -> MessageRows:
        wanted, after = query.filter, query.after
        newest_first = sorted(
            (m for m in self._records.values() if m.account_id == account_id),
            key=lambda m: (m.created_at, m.message_id),
            reverse=True,
        )
        if after is not None:
            position = (after.created_at, after.lead_id)
            newest_first = [m for m in newest_first if (m.created_at, m.message_id) < position]
        rows = query.limit + 1
        if wanted.status is None:
            return MessageRows([m for m in newest_first if wanted.matches(m)][:rows])
        walk = [m for m in newest_first if _without_status(wanted).matches(m)][:window]
        found = [m for m in walk if m.status == wanted.status][:rows]
        if len(found) == rows or len(walk) < window:
            return MessageRows(found)
        last = walk[-1]
        return MessageRows(found, PageCursor(last.created_at, last.message_id))

    def stored(self) -> Iterator[Message]:
        """Every message, in the order stored (for the memory event store)."""
        return iter(self._records.values())

    def replace(self, message: Message) -> None:
        """Put ``message`` in the place of the stored one with its id."""
        self._records[message.message_id] = message
