"""Jobs run by this process, as asyncio tasks: the job queue of a server on SQLite (one
server per database) and of the memory adapters."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import structlog

from leadmail.ports.jobs import JobHandler, JobQueue

log = structlog.get_logger("leadmail.jobs")


class InProcessJobQueue(JobQueue):
    """Each job runs as soon as one of ``concurrency`` places is free, while the queue is
        started; jobs queued before ``start`` wait for it. A job with a ``run_at`` ahead waits
        for it on a timer (kept in memory only: the services queue such jobs again when the
        server starts). ``stop`` cancels what runs and what waits (an import is resumed from
        its last batch at the next start). A schedule's runs are a task of their own while
    started, each taking one of the places as a job does."""

    def __init__(self, concurrency: int = 8) -> None:  # imports, and one per campaign
        self._handlers: dict[str, JobHandler] = {}
        self._places = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.Task[None]] = set()
        self._waiting: list[tuple[str, str, datetime | None]] = []
        self._schedules: dict[str, tuple[str, JobHandler]] = {}
        self._scheduled: set[asyncio.Task[None]] = set()
        self._started = False

    def handle(self, kind: str, handler: JobHandler) -> None:
        self._handlers[kind] = handler

    def schedule(self, kind: str, expression: str, handler: JobHandler) -> None:
        # The expression is read when the queue starts (croniter takes 70 ms to import:
        # not for every command that wires the services); Settings checked it already.
        self._schedules[kind] = (expression, handler)

    async def enqueue(self, kind: str, payload: str, *, run_at: datetime | None = None) -> None:
        if kind not in self._handlers:
            raise LookupError(f"no handler for jobs of kind {kind!r}")
        if not self._started:
            self._waiting.append((kind, payload, run_at))
            return
        delay = 0.0 if run_at is None else (run_at - datetime.now(UTC)).total_seconds()
        if delay > 0:
            timer = asyncio.create_task(self._later(delay, kind, payload))
            self._timers.add(timer)
            timer.add_done_callback(self._timers.discard)
            return
        task = asyncio.create_task(self._run(kind, payload))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self) -> None:
        self._started = True
        for kind, (expression, handler) in self._schedules.items():
            self._scheduled.add(asyncio.create_task(self._every(kind, expression, handler)))
        waiting, self._waiting = self._waiting, []
        for kind, payload, run_at in waiting:
            await self.enqueue(kind, payload, run_at=run_at)

    async def stop(self) -> None:
        self._started = False
        tasks = [*self._scheduled, *self._timers, *self._tasks]
        self._scheduled = set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def queued_count(self) -> int:
        return len(self._waiting) + len(self._timers)

    def waiting(self) -> list[tuple[str, str, datetime | None]]:
        """The jobs queued before ``start`` (kind, payload, run_at), in order (for tests)."""
        return list(self._waiting)

    async def idle(self) -> None:
        """Until every job queued so far that is due has finished (for tests; a job
        waiting for its ``run_at`` is not waited for)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _later(self, delay: float, kind: str, payload: str) -> None:
        await asyncio.sleep(delay)
        await self.enqueue(kind, payload)

    async def _every(self, kind: str, expression: str, handler: JobHandler) -> None:
        """``handler`` at each time of ``expression`` from now on; a time that passed
        while a run went on is skipped, not run late."""
        from croniter import croniter

        while True:
            now = datetime.now(UTC)
            due: datetime = croniter(expression, now).get_next(datetime)
            await asyncio.sleep((due - now).total_seconds())
            async with self._places:
                try:
                    await handler("")
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # the next time tries again
                    log.error("scheduled_job_failed", kind=kind, error_type=type(e).__name__)

    async def _run(self, kind: str, payload: str) -> None:
        async with self._places:
            try:
                await self._handlers[kind](payload)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the handler records its own failure; one line here
                log.error("job_failed", kind=kind, error_type=type(e).__name__)
