"""Daily send quotas in a dict (tests, the memory adapters)."""

from __future__ import annotations

from datetime import date

from leadmail.ports.quotas import QuotaRepository


class MemoryQuotaRepository(QuotaRepository):
    def __init__(self) -> None:
        self._quotas: dict[str, int] = {}
        self._sent: dict[tuple[str, date], int] = {}

    async def quota(self, account_id: str) -> int:
        return self._quotas.get(account_id, 0)

    async def set_quota(self, account_id: str, quota: int) -> bool:
        self._quotas[account_id] = quota
        return True

    async def take(self, account_id: str, day: date, count: int, quota: int) -> int | None:
        after = self._sent.get((account_id, day), 0) + count
        if after > quota:
            return None
        self._sent[(account_id, day)] = after
        return after

    async def give_back(self, account_id: str, day: date, count: int) -> None:
        key = (account_id, day)
        self._sent[key] = max(0, self._sent.get(key, 0) - count)

    async def sent(self, account_id: str, day: date) -> int:
        return self._sent.get((account_id, day), 0)
