"""On Postgres (pgqueuer), a job queued with a ``run_at`` ahead is not taken before then,
and is taken once it comes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.jobs import PgQueuerJobQueue
from leadmail.adapters.db.migrate import migrate
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
