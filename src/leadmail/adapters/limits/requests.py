"""Request budgets (ports/request_limits.py) counted by the `limits` package: a sliding
window counter per bucket (this minute's count plus the last minute's, weighted by how much
of it still overlaps the window), in this process's memory or in Redis. Two counters per
bucket whatever the rate, and on Redis one script per request: cheaper than a moving
window's list of every request's time, at the cost of an estimate (never more than the
budget in a minute's window, at most a few requests short of it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter

from leadmail.adapters.limits.storage import DEFAULT_PREFIX
from leadmail.ports.rate_limits import LimiterUnavailable
from leadmail.ports.request_limits import Allowance, RequestLimiter


class LimitsRequestLimiter(RequestLimiter):
    """``per_minute`` requests per bucket, every bucket under ``namespace``. ``errors``:
    what the storage raises when it cannot be reached (LimiterUnavailable instead)."""

    def __init__(
        self,
        storage: Storage,
        per_minute: int,
        namespace: str,
        *,
        errors: tuple[type[Exception], ...] = (),
        closing: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if per_minute < 1:
            raise ValueError(f"a budget is at least 1 request a minute, got {per_minute}")
        self._storage = storage
        self._limiter = SlidingWindowCounterRateLimiter(storage)
        self._item = RateLimitItemPerMinute(per_minute, namespace=namespace)
        self._errors = errors
        self._closing = closing

    async def hit(self, bucket: str) -> Allowance:
        try:
            allowed = await self._limiter.hit(self._item, bucket)
            stats = await self._limiter.get_window_stats(self._item, bucket)
        except self._errors as e:
            raise LimiterUnavailable(
                f"The request limiter's storage is unavailable ({type(e).__name__})"
            ) from e
        reset_after = max(0.0, stats.reset_time - time.time())
        return Allowance(allowed, self._item.amount, stats.remaining, reset_after)

    async def peek(self, bucket: str) -> Allowance:
        try:
            allowed = await self._limiter.test(self._item, bucket)
            stats = await self._limiter.get_window_stats(self._item, bucket)
        except self._errors as e:
            raise LimiterUnavailable(
                f"The request limiter's storage is unavailable ({type(e).__name__})"
            ) from e
        reset_after = max(0.0, stats.reset_time - time.time())
        return Allowance(allowed, self._item.amount, stats.remaining, reset_after)

    async def close(self) -> None:
        if self._closing is not None:
            await self._closing()


def request_limiter_from(
    redis_url: str, per_minute: int, namespace: str, *, key_prefix: str = DEFAULT_PREFIX
) -> RequestLimiter | None:
    """``per_minute`` requests per bucket (0: no limit, None), counted in the Redis at
    ``redis_url`` (every process and server that shares it shares the budgets) or, when it
    is empty, in this process's memory."""
    if per_minute == 0:
        return None
    if not redis_url:
        return LimitsRequestLimiter(MemoryStorage(), per_minute, namespace)
    from leadmail.adapters.limits.redis_storage import redis_request_limiter  # only with Redis

    return redis_request_limiter(redis_url, per_minute, namespace, key_prefix)
