"""Where each account's daily send quota and today's count are kept."""

from __future__ import annotations

from datetime import date
from typing import Protocol


class QuotaRepository(Protocol):
    async def quota(self, account_id: str) -> int:
        """The account's messages a UTC day (0: none; an unknown account has none)."""
        ...

    async def set_quota(self, account_id: str, quota: int) -> bool:
        """Set it; False when there is no such account."""
        ...

    async def take(self, account_id: str, day: date, count: int, quota: int) -> int | None:
        """Count ``count`` more messages on ``day`` if the day's count stays within
        ``quota``, in one step (two takers never both get the last places): the day's
        count after, or None (nothing counted) when it would pass the quota."""
        ...

    async def give_back(self, account_id: str, day: date, count: int) -> None:
        """Uncount ``count`` messages of ``day`` (never below 0): taken, then not sent."""
        ...

    async def sent(self, account_id: str, day: date) -> int:
        """The day's count."""
        ...
