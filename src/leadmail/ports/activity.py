"""What an account's activity is counted from (domain/activity.py): indexed counts only."""

from __future__ import annotations

from datetime import date, datetime
from typing import Protocol


class ActivityCounts(Protocol):
    """Raises StorageUnavailable when unreachable."""

    async def leads_per_day(self, account_id: str, since: datetime) -> dict[date, int]:
        """Leads made on each UTC day from ``since`` on (days with none left out)."""
        ...

    async def messages_per_day(
        self, account_id: str, since: datetime
    ) -> dict[tuple[date, str], int]:
        """Messages made on each UTC day from ``since`` on, by status (as stored); a
        campaign message handed back unsent (``failed`` with domain/campaigns.HANDED_BACK)
        is left out: no mail went."""
        ...

    async def suppressions_by_reason(self, account_id: str) -> dict[str, int]: ...
