"""The job queue on Postgres: pgqueuer. Jobs are rows of its table, taken by the worker of
any server with ``FOR UPDATE SKIP LOCKED`` (one worker per job), woken by LISTEN/NOTIFY;
a taken job whose worker stops sending heartbeats is taken again by another."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import structlog

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import translate_errors
from leadmail.adapters.db.statements import plain_statement
from leadmail.ports.jobs import JobHandler, JobQueue

if TYPE_CHECKING:  # pgqueuer is imported when a job is first queued or run, not by every command
    import asyncpg
    from pgqueuer import Job, PgQueuer
    from pgqueuer.models import Schedule
    from pgqueuer.queries import Queries

log = structlog.get_logger("leadmail.jobs")
# How long a stopping server lets its running jobs finish before cancelling them (an import
# cancelled is taken again, by any server, once its heartbeat is missed: it resumes).
STOP_WAIT_S = 2.0
RESTART_AFTER_S = 5.0  # after the worker lost its connection
JOB_CONCURRENCY = 8  # jobs a process runs at once: imports, and one per campaign it sends


_QUEUED = plain_statement("SELECT count(*) AS queued FROM pgqueuer WHERE status = 'queued'")


class PgQueuerJobQueue(JobQueue):
    """Enqueues anywhere (through the pool); runs jobs while started (``start``/``stop``:
    a server's lifespan), at most ``concurrency`` at a time in this process, on a
    connection of its own, made again if it is lost (the database restarted). A job's
    payload is also its dedupe key: queuing a job already waiting or running adds nothing."""

    def __init__(
        self,
        database: Database,
        *,
        concurrency: int = JOB_CONCURRENCY,
        heartbeat_timeout: timedelta = timedelta(seconds=30),
    ) -> None:
        self._database = database
        self._concurrency = concurrency
        self._heartbeat_timeout = heartbeat_timeout
        self._handlers: dict[str, JobHandler] = {}
        self._schedules: dict[str, tuple[str, JobHandler]] = {}
        self._manager: PgQueuer | None = None
        self._worker: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def handle(self, kind: str, handler: JobHandler) -> None:
        self._handlers[kind] = handler

    def schedule(self, kind: str, expression: str, handler: JobHandler) -> None:
        """pgqueuer's scheduler: a row of pgqueuer_schedules per (kind, expression), taken
        at its time by one worker of all those on the database. The expression this
        process starts with replaces the kind's others (a changed setting)."""
        self._schedules[kind] = (expression, handler)

    async def enqueue(self, kind: str, payload: str, *, run_at: datetime | None = None) -> None:
        # pgqueuer takes a delay from the database's now: ours is close enough to it.
        delay = None if run_at is None else max(timedelta(0), run_at - datetime.now(UTC))
        with translate_errors():
            pool = self._database.pool
            if pool is not None:
                async with pool.acquire() as connection:
                    await _enqueue(_queries(connection), kind, payload, delay)
                return
            connection = await self._database.connect_dedicated()
            try:
                await _enqueue(_queries(connection), kind, payload, delay)
            finally:
                await connection.close()

    async def queued_count(self) -> int:
        row = await self._database.fetchrow(_QUEUED)  # (an index holds the queued ones)
        return 0 if row is None else int(row["queued"])

    async def start(self) -> None:
        self._stopping.clear()
        self._worker = asyncio.create_task(self._supervise())

    async def _supervise(self) -> None:
        """The worker, started again RESTART_AFTER_S after it stops on an error."""
        while not self._stopping.is_set():
            await self._work()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=RESTART_AFTER_S)

    async def _work(self) -> None:
        try:
            connection = await self._database.connect_dedicated()
        except Exception as e:  # the database is away: try again later
            log.warning("job_worker_cannot_connect", error_type=type(e).__name__)
            return
        from pgqueuer import AsyncpgDriver, PgQueuer

        # One driver (its lock) for the queue's manager and the scheduler: one connection.
        app = PgQueuer(AsyncpgDriver(connection))
        for kind, handler in self._handlers.items():
            app.entrypoint(kind)(_runner(handler))
        for kind, (expression, handler) in self._schedules.items():
            app.schedule(kind, expression, clean_old=True)(_scheduled(handler))
        self._manager = app
        # Without schedules, the queue's manager alone (the scheduler would poll for none).
        run = app.run if self._schedules else app.qm.run
        try:
            await run(
                batch_size=1,
                max_concurrent_tasks=max(2, self._concurrency),
                heartbeat_timeout=self._heartbeat_timeout,
                dequeue_timeout=timedelta(seconds=5),
            )
        except Exception as e:
            log.error("job_worker_stopped", error_type=type(e).__name__)
        finally:
            self._manager = None
            with contextlib.suppress(Exception):
                await connection.close()

    async def stop(self) -> None:
        self._stopping.set()
        if self._manager is not None:
            self._manager.shutdown.set()
        worker, self._worker = self._worker, None
        if worker is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(worker), timeout=STOP_WAIT_S)
            if not worker.done():
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)


def _queries(connection: asyncpg.Connection) -> Queries:
    from pgqueuer import AsyncpgDriver
    from pgqueuer.queries import Queries

    return Queries(AsyncpgDriver(connection))


async def _enqueue(queries: Queries, kind: str, payload: str, delay: timedelta | None) -> None:
    await queries.enqueue(
        kind,
        payload.encode(),
        execute_after=delay,
        dedupe_key=f"{kind}:{payload}",
        on_conflict="skip",
    )


def _scheduled(handler: JobHandler) -> Callable[[Schedule], Awaitable[None]]:
    async def run(_: Schedule) -> None:
        await handler("")

    return run


def _runner(handler: JobHandler) -> Callable[[Job], Awaitable[None]]:
    async def run(job: Job) -> None:
        await handler((job.payload or b"").decode())

    return run
