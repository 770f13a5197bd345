"""Jobs run by this process, as asyncio tasks: the job queue of a server on SQLite (one
server per database) and of the memory adapters."""

from __future__ import annotations

import asyncio

import structlog

from leadmail.ports.jobs import JobHandler, JobQueue

log = structlog.get_logger("leadmail.jobs")


class InProcessJobQueue(JobQueue):
    """Each job runs as soon as one of ``concurrency`` places is free, while the queue is
    started; jobs queued before ``start`` wait for it. ``stop`` cancels what runs (an
    import is resumed from its last batch at the next start)."""

    def __init__(self, concurrency: int = 2) -> None:
        self._handlers: dict[str, JobHandler] = {}
        self._places = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._waiting: list[tuple[str, str]] = []
        self._started = False

    def handle(self, kind: str, handler: JobHandler) -> None:
        self._handlers[kind] = handler

    async def enqueue(self, kind: str, payload: str) -> None:
        if kind not in self._handlers:
            raise LookupError(f"no handler for jobs of kind {kind!r}")
        if not self._started:
            self._waiting.append((kind, payload))
            return
        task = asyncio.create_task(self._run(kind, payload))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self) -> None:
        self._started = True
        waiting, self._waiting = self._waiting, []
        for kind, payload in waiting:
            await self.enqueue(kind, payload)

    async def stop(self) -> None:
        self._started = False
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def idle(self) -> None:
        """Until every job queued so far has finished (for tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _run(self, kind: str, payload: str) -> None:
        async with self._places:
            try:
                await self._handlers[kind](payload)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the handler records its own failure; one line here
                log.error("job_failed", kind=kind, error_type=type(e).__name__)
