"""The job queue on Postgres: pgqueuer. Jobs are rows of its table, taken by the worker of
any server with ``FOR UPDATE SKIP LOCKED`` (one worker per job), woken by LISTEN/NOTIFY;
a taken job whose worker stops sending heartbeats is taken again by another."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta

import asyncpg
import structlog
from pgqueuer import AsyncpgDriver, Job, QueueManager
from pgqueuer.queries import Queries

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import translate_errors
from leadmail.ports.jobs import JobHandler, JobQueue

log = structlog.get_logger("leadmail.jobs")
# How long a stopping server lets its running jobs finish before cancelling them (an import
# cancelled is taken again, by any server, once its heartbeat is missed: it resumes).
STOP_WAIT_S = 2.0


class PgQueuerJobQueue(JobQueue):
    """Enqueues anywhere; runs jobs while started (``start``/``stop``: a server's
    lifespan), at most ``concurrency`` at a time in this process. A job's payload is also
    its dedupe key: queuing a job already waiting or running adds nothing."""

    def __init__(
        self,
        database: Database,
        *,
        concurrency: int = 2,
        heartbeat_timeout: timedelta = timedelta(seconds=30),
    ) -> None:
        self._database = database
        self._concurrency = concurrency
        self._heartbeat_timeout = heartbeat_timeout
        self._handlers: dict[str, JobHandler] = {}
        self._connection: asyncpg.Connection | None = None
        self._manager: QueueManager | None = None
        self._worker: asyncio.Task[None] | None = None

    def handle(self, kind: str, handler: JobHandler) -> None:
        self._handlers[kind] = handler

    async def enqueue(self, kind: str, payload: str) -> None:
        with translate_errors():
            if self._manager is not None:
                queries = self._manager.queries
                await _enqueue(queries, kind, payload)  # type: ignore[arg-type]
                return
            connection = await self._database.connect_dedicated()
            try:
                await _enqueue(Queries(AsyncpgDriver(connection)), kind, payload)
            finally:
                await connection.close()

    async def start(self) -> None:
        with translate_errors():
            self._connection = await self._database.connect_dedicated()
        manager = QueueManager(Queries(AsyncpgDriver(self._connection)))
        for kind, handler in self._handlers.items():
            manager.entrypoint(kind)(_runner(handler))
        self._manager = manager
        self._worker = asyncio.create_task(self._run(manager))

    async def _run(self, manager: QueueManager) -> None:
        try:
            await manager.run(
                batch_size=1,
                max_concurrent_tasks=max(2, self._concurrency),
                heartbeat_timeout=self._heartbeat_timeout,
                dequeue_timeout=timedelta(seconds=5),
            )
        except Exception as e:  # the worker is gone; jobs wait for the next start
            log.error("job_worker_stopped", error_type=type(e).__name__)

    async def stop(self) -> None:
        manager, worker, self._manager, self._worker = self._manager, self._worker, None, None
        if manager is not None and worker is not None:
            manager.shutdown.set()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(worker), timeout=STOP_WAIT_S)
            if not worker.done():
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection.close()


async def _enqueue(queries: Queries, kind: str, payload: str) -> None:
    await queries.enqueue(
        kind, payload.encode(), dedupe_key=f"{kind}:{payload}", on_conflict="skip"
    )


def _runner(handler: JobHandler) -> Callable[[Job], Awaitable[None]]:
    async def run(job: Job) -> None:
        await handler((job.payload or b"").decode())

    return run
