"""The rate limiter's counts and holds on Postgres (ports/rate_limits.py's LimitStorage):
what every process on one database shares without Redis.

Counts are grants, one row per acquire (its lane, its moment and its cost), counted and
added to by ``rate_take`` (its migration says how) in one round trip; holds are one row per
lane, the moment it is held until, only ever moved later. Every moment is the database's
clock (clock_timestamp()), so the processes' own clocks do not matter. The statements run
on the pool, never in the calling task's transaction: a grant is committed, and the lane's
lock let go, as soon as it is taken.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused
from leadmail.adapters.db.pool import FairPool
from leadmail.domain.pacing import MAX_WINDOW_SECONDS, SPACING, Window
from leadmail.ports.errors import PortError, StorageUnavailable
from leadmail.ports.rate_limits import LimitStorage

# Grants older than the longest window any rate has (its spacing included) are of no use
# to any process, whatever rate it was started with: each take prunes them from its lane.
KEPT_SECONDS = math.ceil(MAX_WINDOW_SECONDS + SPACING)
# Each window counted SPACING longer than the rate's: the provider sees the rate despite
# the jitter of each request on its way there.
_TAKE = f"SELECT rate_take($1, $2, $3::integer[], $4::integer[], {SPACING}::float8, {KEPT_SECONDS})"
_REMAINING = (
    "SELECT extract(epoch FROM held_until - clock_timestamp())::float8"
    " FROM rate_holds WHERE lane = $1"
)
_EXTEND = (
    "INSERT INTO rate_holds (lane, held_until)"
    " VALUES ($1, clock_timestamp() + make_interval(secs => $2::float8))"
    " ON CONFLICT (lane) DO UPDATE"
    " SET held_until = greatest(rate_holds.held_until, excluded.held_until)"
)
_REFUSED = "The rate limiter's tables refused the statement (are the migrations applied?)"


class PostgresLimitStorage(LimitStorage):
    """Driver errors leave as port errors: StorageUnavailable when the database cannot be
    reached (the limiter's LimiterUnavailable), PortError for the rest."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def _pool(self) -> FairPool:
        pool = self._database.pool
        if pool is None:  # not started, or closed
            raise StorageUnavailable()
        return pool

    async def take(self, lane: str, cost: int, windows: Sequence[Window]) -> float | None:
        amounts = [w.amount for w in windows]
        seconds = [w.seconds for w in windows]
        with refused(_REFUSED):
            row = await self._pool().fetchrow(_TAKE, lane, cost, amounts, seconds)
        if row is None:  # a function's call is one row: None there would read as counted
            raise PortError(_REFUSED)
        wait: float | None = row[0]
        return wait

    async def remaining(self, lane: str) -> float:
        with refused(_REFUSED):
            row = await self._pool().fetchrow(_REMAINING, lane)
        return max(row[0], 0.0) if row is not None else 0.0

    async def extend(self, lane: str, seconds: float) -> None:
        with refused(_REFUSED):
            await self._pool().execute(_EXTEND, lane, seconds)
