"""On Postgres (pgqueuer), a job queued with a ``run_at`` ahead is not taken before then,
and is taken once it comes; a schedule's times are each run once among the workers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.jobs import PgQueuerJobQueue
from leadmail.adapters.db.migrate import migrate
from leadmail.ports.jobs import JobHandler
from tests.postgres import fresh_database

pytestmark = pytest.mark.postgres


@pytest.fixture
async def database(postgres_server: str) -> AsyncIterator[Database]:
    async with fresh_database(postgres_server) as url, Database.from_url(url).running() as db:
        await migrate(db)
        yield db


async def test_a_job_is_run_at_its_time_not_before(database: Database) -> None:
    ran: list[tuple[str, datetime]] = []
    done = asyncio.Event()

    async def handler(payload: str) -> None:
        ran.append((payload, datetime.now(UTC)))
        if len(ran) == 2:
            done.set()

    queue = PgQueuerJobQueue(database)
    queue.handle("test_job", handler)
    asked = datetime.now(UTC)
    await queue.enqueue("test_job", "later", run_at=asked + timedelta(seconds=2))
    await queue.enqueue("test_job", "now", run_at=asked - timedelta(hours=1))
    await queue.start()
    try:
        await asyncio.wait_for(done.wait(), timeout=30)
    finally:
        await queue.stop()

    assert [payload for payload, _ in ran] == ["now", "later"]
    assert ran[1][1] >= asked + timedelta(seconds=2) - timedelta(milliseconds=50)


async def test_a_schedule_runs_on_one_of_two_workers_at_each_of_its_times(
    database: Database,
) -> None:
    """pgqueuer's scheduler: two workers on one database, a schedule every second; each
    time is run once, by whichever worker takes it (never by both)."""
    runs: list[tuple[str, datetime]] = []

    def handler_of(worker: str) -> JobHandler:
        async def handler(payload: str) -> None:
            assert payload == ""
            runs.append((worker, datetime.now(UTC)))
            await asyncio.sleep(0.2)  # both would run it at once if both took it

        return handler

    queues = [PgQueuerJobQueue(database) for _ in range(2)]
    for name, queue in zip(("a", "b"), queues, strict=True):
        queue.schedule("test_schedule", "* * * * * *", handler_of(name))
    for queue in queues:
        await queue.start()
    try:
        async with asyncio.timeout(30):
            while len(runs) < 4:
                await asyncio.sleep(0.05)
    finally:
        for queue in queues:
            await queue.stop()

    seconds = [at.replace(microsecond=0) for _, at in runs]
    assert len(seconds) == len(set(seconds)), runs  # no second run twice
