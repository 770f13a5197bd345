"""Rate limits shared by every process: how fast requests of a kind (a lane) may go.

A lane is a name (``email:resend``: see domain/pacing.email_lane); its rate is set when
the limiter is built. The same storage serves other lanes (later: API rate limits), so
lanes are the only thing that keeps their counts apart.

The limiter (adapters/limits) decides when to wait; what it counts and holds is kept by a
storage (Counts and Holds, below): this process's memory and Redis in adapters/limits,
Postgres in adapters/db. Adapters do not import each other, so the storage's contract is
a port, which both sides import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from leadmail.domain.pacing import Window
from leadmail.ports.errors import PortError


class LimiterUnavailable(PortError):
    """The limiter's shared storage (Redis) cannot be reached: nothing was counted."""

    code = "LIMITER_UNAVAILABLE"

    def __init__(self, message: str = "The rate limiter's storage is unavailable") -> None:
        super().__init__(message)


class RateLimiter(Protocol):
    async def acquire(self, lane: str, cost: int = 1) -> None:
        """Wait until ``cost`` more requests on ``lane`` fit the lane's rate in every
        one-second window (no burst above it), on every process sharing the limiter, and no
        hold is on the lane; then count them. A lane whose rate is 0 (or that has none)
        waits only for a hold. Raises ValueError when ``cost`` could never fit the lane's
        rate, LimiterUnavailable when the storage cannot be reached."""
        ...

    async def unheld(self, lane: str) -> None:
        """Wait until no hold is on ``lane``; nothing is counted. (A campaign's sender
        claims no new batch while the provider has told every worker to wait.) Raises
        LimiterUnavailable when the storage cannot be reached."""
        ...

    async def hold(self, lane: str, seconds: float) -> None:
        """No request on the lane for ``seconds`` (a provider's 429 Retry-After), for every
        process sharing the limiter; a shorter hold never shortens a longer one."""
        ...

    async def close(self) -> None:
        """Give back the storage's connections (once, at shutdown)."""
        ...


class Counts(Protocol):
    """The requests counted on each lane, in moving windows, shared by every limiter that
    uses the same storage."""

    async def take(self, lane: str, cost: int, windows: Sequence[Window]) -> float | None:
        """Count ``cost`` requests on ``lane`` if they fit every window now and return
        None; else count nothing and return the seconds to wait before asking again: until
        a place frees in a window that is full, and the spacing after it
        (domain/pacing.SPACING); 0 when one frees now (ask again). The check and the count
        are one step: two takers never both get the last place."""
        ...


class Holds(Protocol):
    """Until when each lane is held, for every limiter that uses the same storage."""

    async def remaining(self, lane: str) -> float:
        """Seconds the hold on ``lane`` still has; 0 when there is none."""
        ...

    async def extend(self, lane: str, seconds: float) -> None:
        """Hold ``lane`` ``seconds`` from now, unless it is held longer already."""
        ...


class LimitStorage(Counts, Holds, Protocol):
    """Counts and holds kept in one place (a database every process shares)."""
