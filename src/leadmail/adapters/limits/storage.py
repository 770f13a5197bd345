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

import math
import time
from collections.abc import Mapping, Sequence

import redis.asyncio
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisError

from leadmail.adapters.limits.lanes import LaneLimiter, MemoryHolds
from leadmail.domain.pacing import SPACING, Window
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.rate_limits import Counts, Holds, LimitStorage

DEFAULT_PREFIX = "leadmail"
REDIS_TIMEOUT_S = 5.0  # connecting, each command, and waiting for a free connection
# Connections to Redis per process: a call waits for a free one rather than opening one
# per waiting task (an unlimited lane's acquire() is one round trip, for the hold).
REDIS_CONNECTIONS = 16

# Hold KEYS[1] for ARGV[1] ms from now, unless it is held longer already.
_EXTEND_HOLD = """
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then
    redis.call('SET', KEYS[1], '1', 'PX', ms)
end
return 1
"""


class LimitsCounts(Counts):
    """Moving windows of the `limits` package on one of its storages."""

    def __init__(self, storage: MemoryStorage | RedisStorage) -> None:
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


class RedisHolds(Holds):
    def __init__(self, client: redis.asyncio.Redis, prefix: str) -> None:
        self._client = client
        self._prefix = prefix
        self._extend = client.register_script(_EXTEND_HOLD)

    def _key(self, lane: str) -> str:
        return f"{self._prefix}:hold:{lane}"

    async def remaining(self, lane: str) -> float:
        left_ms = await self._client.pttl(self._key(lane))
        return left_ms / 1000 if left_ms > 0 else 0.0  # -2: no key (no hold)

    async def extend(self, lane: str, seconds: float) -> None:
        await self._extend(keys=[self._key(lane)], args=[max(1, math.ceil(seconds * 1000))])


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
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        redis_url,
        max_connections=REDIS_CONNECTIONS,
        timeout=REDIS_TIMEOUT_S,
        socket_connect_timeout=REDIS_TIMEOUT_S,
        socket_timeout=REDIS_TIMEOUT_S,
    )
    client = redis.asyncio.Redis(connection_pool=pool)
    # The limits storage and the holds share the one pool.
    storage = RedisStorage(
        f"async+{redis_url}",
        wrap_exceptions=True,
        implementation="redispy",
        key_prefix=key_prefix,
        connection_pool=pool,  # type: ignore[arg-type]
    )
    return LaneLimiter(
        LimitsCounts(storage),
        RedisHolds(client, key_prefix),
        rates,
        errors=(StorageError, RedisError, OSError),
        closing=pool.aclose,
    )
