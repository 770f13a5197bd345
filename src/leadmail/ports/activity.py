"""What an account's activity is counted from (domain/activity.py): counts kept as rows
are written, or indexed ones; never a scan of an account's leads or messages."""

from __future__ import annotations

from datetime import date
from typing import Protocol


class ActivityCounts(Protocol):
    """Raises StorageUnavailable when unreachable."""

    async def leads_per_day(self, account_id: str, since: date) -> dict[date, int]:
        """The account's leads made on each UTC day from ``since`` on (days with none left
        out); a lead deleted since is not counted."""
        ...

    async def messages_per_day(self, account_id: str, since: date) -> dict[tuple[date, str], int]:
        """Messages made on each UTC day from ``since`` on, by their outcome now (their
        status once not pending); a pending message is left out, and so is a campaign
        message handed back unsent (``failed`` with domain/campaigns.HANDED_BACK): no mail
        went."""
        ...

    async def suppressions_by_reason(self, account_id: str) -> dict[str, int]: ...
