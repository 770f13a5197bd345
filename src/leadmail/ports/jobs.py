"""Background jobs: work that outlives the request that asked for it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

# What runs a job: its payload in, nothing out. It must be safe to run again after a
# crash (a job whose runner stopped is run again).
JobHandler = Callable[[str], Awaitable[None]]


class JobQueue(Protocol):
    """Jobs of named kinds, each with a small text payload (an id), run in the background
    by a worker of whichever server takes them first; each job is taken by one worker at a
    time. Raises StorageUnavailable when the queue cannot be reached."""

    def handle(self, kind: str, handler: JobHandler) -> None:
        """Run ``handler`` for jobs of ``kind`` (before the worker starts)."""
        ...

    def schedule(self, kind: str, expression: str, handler: JobHandler) -> None:
        """Run ``handler`` (with an empty payload) at each time the cron ``expression``
        names (UTC; a sixth field: seconds), by one worker of all those on the storage
        (before the worker starts). A run still going when the next time comes is not
        started twice by this worker."""
        ...

    async def enqueue(self, kind: str, payload: str, *, run_at: datetime | None = None) -> None:
        """Queue one job; it runs once a worker is free, and not before ``run_at`` when
        given (a moment past: at once). A job of that kind and payload already waiting or
        running may make this one the same job (pgqueuer's dedupe key): it runs once."""
        ...

    async def queued_count(self) -> int:
        """Jobs waiting to run (their time come or not), for every worker (GET /metrics)."""
        ...
