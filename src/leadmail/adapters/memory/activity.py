"""An account's activity counted over the memory stores."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.campaigns import HANDED_BACK
from leadmail.domain.email import MessageStatus
from leadmail.ports.activity import ActivityCounts


def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


class MemoryActivityCounts(ActivityCounts):
    def __init__(
        self,
        leads: MemoryLeadRepository,
        messages: MemoryMessageRepository,
        suppressions: MemorySuppressionRepository,
    ) -> None:
        self._leads = leads
        self._messages = messages
        self._suppressions = suppressions

    async def leads_per_day(self, account_id: str, since: date) -> dict[date, int]:
        found = self._leads._leads.values()
        return dict(
            Counter(_day(x.created_at) for x in found
                    if x.account_id == account_id and _day(x.created_at) >= since)
        )  # fmt: skip

    async def messages_per_day(self, account_id: str, since: date) -> dict[tuple[date, str], int]:
        found = self._messages._records.values()
        return dict(
            Counter((_day(m.created_at), m.status.value) for m in found
                    if m.account_id == account_id and _day(m.created_at) >= since
                    and m.status is not MessageStatus.PENDING
                    and not (m.status is MessageStatus.FAILED and m.last_error == HANDED_BACK))
        )  # fmt: skip

    async def suppressions_by_reason(self, account_id: str) -> dict[str, int]:
        found = self._suppressions._entries.values()
        return dict(Counter(s.reason.value for s in found if s.account_id == account_id))
