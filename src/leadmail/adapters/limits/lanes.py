"""The RateLimiter's own logic: when to wait, for how long, and holds.

What is counted, and where, is the Counts' (ports/rate_limits.py; storage.py: the `limits`
package's moving window, in memory or Redis; adapters/db/rate_limits.py: Postgres); where
holds are kept is the Holds'. This module only decides, so the tests drive it with a fake
clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping

from leadmail.domain.pacing import Window, windows_for
from leadmail.ports.rate_limits import Counts, Holds, LimiterUnavailable, RateLimiter

# Never wait less than this between two tries on a full lane: the storage said a place
# frees now, yet another process may have taken it; a try costs a round trip to Redis
# or Postgres.
MIN_WAIT = 0.001


class MemoryHolds(Holds):
    """Holds of this process, on its monotonic clock."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._until: dict[str, float] = {}

    async def remaining(self, lane: str) -> float:
        until = self._until.get(lane)
        if until is None:
            return 0.0
        left = until - self._monotonic()
        if left <= 0:
            del self._until[lane]
            return 0.0
        return left

    async def extend(self, lane: str, seconds: float) -> None:
        until = self._monotonic() + seconds
        if until > self._until.get(lane, -math.inf):
            self._until[lane] = until


class LaneLimiter(RateLimiter):
    """``rates``: requests per second per lane (0 = unlimited; a lane not named is
    unlimited too). ``errors``: what the storage raises when it cannot be reached, turned
    into LimiterUnavailable. ``closing`` gives back the storage's connections."""

    def __init__(
        self,
        counts: Counts,
        holds: Holds,
        rates: Mapping[str, float],
        *,
        errors: tuple[type[Exception], ...] = (),
        closing: Callable[[], Awaitable[None]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._counts = counts
        self._holds = holds
        self._windows = {lane: windows_for(rate) for lane, rate in rates.items()}
        self._errors = errors
        self._closing = closing
        self._sleep = sleep

    def windows(self, lane: str) -> tuple[Window, ...]:
        return self._windows.get(lane, ())

    async def acquire(self, lane: str, cost: int = 1) -> None:
        windows = self.windows(lane)
        if cost < 1:
            raise ValueError(f"a cost is a positive number of requests, got {cost}")
        for window in windows:
            if cost > window.amount:
                raise ValueError(
                    f"{cost} requests never fit the lane {lane!r}:"
                    f" at most {window.amount} in any {window.seconds} s"
                )
        while True:
            with self._translated():
                wait = await self._holds.remaining(lane)
                if wait <= 0:
                    if not windows:
                        return
                    until_free = await self._counts.take(lane, cost, windows)
                    if until_free is None:  # counted
                        return
                    wait = until_free  # (with the storage's spacing: domain/pacing.SPACING)
            await self._sleep(max(wait, MIN_WAIT))

    async def unheld(self, lane: str) -> None:
        while True:
            with self._translated():
                wait = await self._holds.remaining(lane)
            if wait <= 0:
                return
            await self._sleep(max(wait, MIN_WAIT))

    async def hold(self, lane: str, seconds: float) -> None:
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise ValueError(f"a hold is a finite number of seconds >= 0, got {seconds!r}")
        if seconds > 0:
            with self._translated():
                await self._holds.extend(lane, seconds)

    async def close(self) -> None:
        if self._closing is not None:
            await self._closing()

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except self._errors as e:
            raise LimiterUnavailable(
                f"The rate limiter's storage is unavailable ({type(e).__name__})"
            ) from e
