"""Whether the storage a process needs is there and in the shape its code expects."""

from __future__ import annotations

from typing import Protocol


class ReadinessProbe(Protocol):
    async def not_ready(self) -> str | None:
        """None when the storage answers and every migration this code knows is applied;
        otherwise why not, in words an operator acts on (it names the database, never its
        password). Bounded in time: an unreachable database is an answer, not a wait."""
        ...
