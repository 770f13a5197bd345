"""Each account's daily send quota (domain/quotas.py), asked by every path that records
messages to send: the outbox (API sends) and a campaign's batches. An account's quota is
read at most every CACHE_S seconds per process, so a change (`leadmail accounts quota`)
takes effect on every running server within that; with no quota, a send costs no query
beyond that read."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.quotas import (
    MAX_QUOTA,
    NO_QUOTA,
    QuotaExceeded,
    QuotaUse,
    next_day_start,
    quota_day,
)
from leadmail.ports.quotas import QuotaRepository

CACHE_S = 10.0


@dataclass(frozen=True, slots=True)
class Taken:
    """Places taken of one day's quota (to give back what was not sent)."""

    day: date
    count: int


NOTHING = Taken(date.min, 0)


class SendQuota:
    def __init__(
        self,
        quotas: QuotaRepository,
        clock: Clock = utc_now,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        cache_s: float = CACHE_S,
    ) -> None:
        self._quotas = quotas
        self._clock = clock
        self._monotonic = monotonic
        self._cache_s = cache_s
        self._cached: dict[str, tuple[int, float]] = {}

    async def _quota(self, account_id: str) -> int:
        now = self._monotonic()
        hit = self._cached.get(account_id)
        if hit is not None and now - hit[1] < self._cache_s:
            return hit[0]
        quota = await self._quotas.quota(account_id)
        self._cached[account_id] = (quota, now)
        return quota

    async def take(self, account_id: str, count: int) -> Taken:
        """Count ``count`` messages against today's quota, or raise QuotaExceeded (nothing
        counted) when they would pass it."""
        if count <= 0:
            return NOTHING
        quota = await self._quota(account_id)
        if quota == NO_QUOTA:
            return NOTHING
        now = self._clock()
        day = quota_day(now)
        if await self._quotas.take(account_id, day, count, quota) is None:
            left = max(0, quota - await self._quotas.sent(account_id, day))
            raise QuotaExceeded(quota, count, left, next_day_start(now), now)
        return Taken(day, count)

    async def give_back(self, account_id: str, taken: Taken, count: int | None = None) -> None:
        """Uncount ``count`` (all by default) of what ``take`` counted: not sent after all
        (nothing when it counted nothing: no quota)."""
        back = taken.count if count is None else min(count, taken.count)
        if back > 0:
            await self._quotas.give_back(account_id, taken.day, back)

    async def exceeded(
        self, account_id: str, *, since: datetime | None = None
    ) -> QuotaExceeded | None:
        """Today's quota used up (what a send of one more would raise), or None.
        ``since``: when the quota refused something; if that was today, today's quota
        counts as used up (what it refused did not fit what is left)."""
        quota = await self._quota(account_id)
        if quota == NO_QUOTA:
            return None
        now = self._clock()
        sent = await self._quotas.sent(account_id, quota_day(now))
        refused_today = since is not None and quota_day(since) == quota_day(now)
        if sent < quota and not refused_today:
            return None
        return QuotaExceeded(quota, 1, max(0, quota - sent), next_day_start(now), now)

    async def use(self, account_id: str) -> QuotaUse:
        quota = await self._quotas.quota(account_id)
        return QuotaUse(quota, await self._quotas.sent(account_id, quota_day(self._clock())))

    async def set(self, account_id: str, quota: int) -> bool:
        """False when there is no such account; ValidationFailed for a quota out of range."""
        if not NO_QUOTA <= quota <= MAX_QUOTA:
            raise ValidationFailed.one("quota", f"must be 0 (none) to {MAX_QUOTA}")
        done = await self._quotas.set_quota(account_id, quota)
        self._cached.pop(account_id, None)
        return done
