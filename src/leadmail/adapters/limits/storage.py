"""Where the limiter keeps its counts and holds: this process's memory, or Redis (Postgres
is adapters/db/rate_limits.py's).

Counts are the `limits` package's moving windows (MovingWindowRateLimiter): a list of
timestamps per lane and window, checked and added to in one step (a Lua script on Redis),
so no window ever holds more than its amount, whichever process asks. Timestamps are the
asking process's clock: processes sharing a Redis need clocks in step (NTP), as any
moving window across hosts does. A hold on Redis is one key whose expiry is the hold's
end, set by a script that only ever moves it later, timed by Redis's own clock.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from leadmail.adapters.limits.lanes import LaneLimiter, MemoryHolds
from leadmail.domain.pacing import SPACING, Window
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.rate_limits import Counts, LimitStorage

DEFAULT_PREFIX = "leadmail"


class LimitsCounts(Counts):
    """Moving windows of the `limits` package on one of its storages."""

    def __init__(self, storage: Storage) -> None:
        self._limiter = MovingWindowRateLimiter(storage)

    async def take(self, lane: str, cost: int, windows: Sequence[Window]) -> float | None:
        items = [RateLimitItemPerSecond(w.amount, w.seconds) for w in windows]
        if len(items) > 1:  # a look first: a lane full in one window takes no place in others
            for item in items:
                if not await self._limiter.test(item, lane, cost=cost):
                    return await self._until_free(item, lane)
        for item in items:
            # Checked and counted in one step. If another process took the place since the
            # look, what this call counted in the windows before stays counted: a place
            # lost, never one too many.
            if not await self._limiter.hit(item, lane, cost=cost):
                return await self._until_free(item, lane)
        return None

    async def _until_free(self, item: RateLimitItemPerSecond, lane: str) -> float:
        stats = await self._limiter.get_window_stats(item, lane)
        until_free = stats.reset_time - time.time()  # the oldest entry's end
        # Whole-second windows: the spacing only delays the requests that were refused.
        return until_free + SPACING if until_free > 0 else 0.0


def rate_limiter_from(
    redis_url: str,
    rates: Mapping[str, float],
    *,
    key_prefix: str = DEFAULT_PREFIX,
    shared: LimitStorage | None = None,
) -> LaneLimiter:
    """A limiter of ``rates`` (requests per second per lane) kept in Redis at
    ``redis_url`` (redis:// or rediss://), every key under ``key_prefix``; when
    ``redis_url`` is empty, kept in ``shared`` (the database every process shares), else in
    this process's memory. Connects at first use."""
    if not redis_url:
        if shared is not None:  # the database's "cannot be reached" is the limiter's
            return LaneLimiter(shared, shared, rates, errors=(StorageUnavailable,))
        return LaneLimiter(LimitsCounts(MemoryStorage()), MemoryHolds(), rates)
    if not redis_url.startswith(("redis://", "rediss://")):
        raise ValueError("a Redis URL starts with redis:// or rediss://")
    from leadmail.adapters.limits.redis_storage import redis_limiter  # only with Redis

    return redis_limiter(redis_url, rates, key_prefix)
