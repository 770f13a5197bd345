"""The limiter's counts and holds in Redis (imported only when LEADMAIL_REDIS_URL is set:
the redis client costs a quarter of a second to import)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from urllib.parse import urlsplit

import redis.asyncio
from limits.aio.storage import RedisStorage
from limits.errors import StorageError
from redis.exceptions import AuthenticationError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.requests import LimitsRequestLimiter
from leadmail.adapters.limits.storage import LimitsCounts
from leadmail.config import ConfigError
from leadmail.ports.rate_limits import Holds, LimiterUnavailable

REDIS_PORT = 6379
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


_ERRORS = (StorageError, RedisError, OSError)


def _pool(redis_url: str) -> redis.asyncio.BlockingConnectionPool:
    return redis.asyncio.BlockingConnectionPool.from_url(
        redis_url,
        max_connections=REDIS_CONNECTIONS,
        timeout=REDIS_TIMEOUT_S,
        socket_connect_timeout=REDIS_TIMEOUT_S,
        socket_timeout=REDIS_TIMEOUT_S,
    )


def _storage(
    redis_url: str, pool: redis.asyncio.BlockingConnectionPool, prefix: str
) -> RedisStorage:
    return RedisStorage(
        f"async+{redis_url}",
        wrap_exceptions=True,
        implementation="redispy",
        key_prefix=prefix,
        connection_pool=pool,  # type: ignore[arg-type]
    )


async def reach(redis_url: str) -> None:
    """A start-up check of the Redis at ``redis_url``: LimiterUnavailable when it does not
    answer (an outage: retry later), ConfigError naming LEADMAIL_REDIS_URL when it answers
    and refuses (a password, a database number). Neither repeats the URL (it may hold a
    password): the server is named by host and port."""
    parts = urlsplit(redis_url)
    server = f"{parts.hostname or 'localhost'}:{parts.port or REDIS_PORT}"
    client = redis.asyncio.Redis.from_url(
        redis_url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S
    )
    try:
        await client.ping()  # type: ignore[misc]  # (typed for the sync client too)
    except (AuthenticationError, ResponseError) as e:
        raise ConfigError(
            f"LEADMAIL_REDIS_URL: Redis at {server} refused the connection: {_first_line(e)}"
        ) from e
    except (*_ERRORS, TimeoutError) as e:
        raise LimiterUnavailable(f"Redis at {server} cannot be reached: {_reason(e)}") from e
    finally:
        await client.aclose()


def _reason(error: BaseException) -> str:
    cause: BaseException | None = error
    while cause is not None:  # redis-py wraps the socket's error in its own
        if isinstance(cause, TimeoutError | RedisTimeoutError):
            return "no answer in time"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
        cause = cause.__cause__ or cause.__context__
    return _first_line(error)


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def redis_limiter(redis_url: str, rates: Mapping[str, float], key_prefix: str) -> LaneLimiter:
    """As rate_limiter_from, on the Redis at ``redis_url``."""
    pool = _pool(redis_url)
    client = redis.asyncio.Redis(connection_pool=pool)
    # The limits storage and the holds share the one pool.
    return LaneLimiter(
        LimitsCounts(_storage(redis_url, pool, key_prefix)),
        RedisHolds(client, key_prefix),
        rates,
        errors=_ERRORS,
        closing=pool.aclose,
    )


def redis_request_limiter(
    redis_url: str, per_minute: int, namespace: str, key_prefix: str
) -> LimitsRequestLimiter:
    """As request_limiter_from, on the Redis at ``redis_url`` (a pool of its own)."""
    pool = _pool(redis_url)
    return LimitsRequestLimiter(
        _storage(redis_url, pool, key_prefix),
        per_minute,
        namespace,
        errors=_ERRORS,
        closing=pool.aclose,
    )


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
