"""The lead import tables and the job queue's, forwards and back: on Postgres pgqueuer's own
tables come with them (its install DDL) and a job queued there is run by the worker."""

from __future__ import annotations

import asyncio

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.jobs import PgQueuerJobQueue
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.lead_imports import IMPORTS, PiccoloLeadImportRepository
from leadmail.adapters.db.migrate import applied_migrations, migrate, rollback_all
from tests.contract.support import T0, new_account_key
from tests.integration.test_migrations import (
    ATTEMPT_MIGRATIONS,
    IMPORT_MIGRATIONS,
    IMPORT_TABLES,
    QUEUE_TABLES,
    EmptyDatabase,
    applied_from,
    empty,
    target,
)
from tests.postgres import fresh_database

__all__ = ["empty", "target"]  # the fixtures, shared with the migrations' own tests


async def test_the_import_migrations_go_back_and_forth(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    postgres = empty.database.kind == "postgres"
    tables = (await empty.schema()).tables
    assert tables >= IMPORT_TABLES
    assert (tables >= QUEUE_TABLES) == postgres
    if not postgres:
        assert not tables & QUEUE_TABLES

    await rollback_all(empty.database, down_to=IMPORT_MIGRATIONS[0])

    assert not set(await applied_migrations(empty.database)) & set(IMPORT_MIGRATIONS)
    assert not (await empty.schema()).tables & (IMPORT_TABLES | QUEUE_TABLES)
    # Those after them (campaigns, attempts, the limiter, sender domains) were undone and
    # come back too.
    assert await migrate(empty.database) == applied_from(IMPORT_MIGRATIONS[0])
    assert (await empty.schema()).tables >= IMPORT_TABLES


@pytest.mark.postgres
async def test_a_job_queued_on_postgres_is_run_once_by_the_worker(postgres_server: str) -> None:
    async with (
        fresh_database(postgres_server) as url,
        Database.from_url(url).running() as database,
    ):
        await migrate(database)
        assert await run_one_job(database) == ["imp_1"]


async def run_one_job(database: Database) -> list[str]:
    """A job queued twice while waiting, then a worker started: what the handler got."""
    ran: list[str] = []
    done = asyncio.Event()

    async def handler(payload: str) -> None:
        ran.append(payload)
        done.set()

    queue = PgQueuerJobQueue(database)
    queue.handle("test_job", handler)
    await queue.enqueue("test_job", "imp_1")
    await queue.enqueue("test_job", "imp_1")  # waiting already: the same job
    await queue.start()
    try:
        await asyncio.wait_for(done.wait(), timeout=20)
        await asyncio.sleep(0.5)
    finally:
        await queue.stop()
    return ran


async def test_imports_stored_before_the_attempts_column_get_none_and_back(
    empty: EmptyDatabase,
) -> None:
    await migrate(empty.database)
    await rollback_all(empty.database, down_to=ATTEMPT_MIGRATIONS[0])
    assert "attempts" not in await import_columns(empty)
    key = await new_account_key(
        PiccoloApiKeyStore(empty.database), label="imports", prefix="lm_attempts"
    )
    await empty.database.execute(
        IMPORTS.statement(
            'INSERT INTO "lead_imports" ("import_id", "account_id", "mode", "tags", "status",'
            ' "size", "rows_done", "created", "updated", "skipped", "failed", "runner", "error",'
            ' "created_at", "updated_at") VALUES'
            " (%s, %s, 'upsert', %s, 'running', 6, 0, 0, 0, 0, 0, 'old', '', %s, %s)"
        ),
        "imp_before",
        key.account_id,
        [] if empty.database.kind == "postgres" else "[]",
        T0,
        T0,
    )

    assert await migrate(empty.database) == applied_from(ATTEMPT_MIGRATIONS[0])

    imports = PiccoloLeadImportRepository(empty.database)
    claimed = await imports.claim("imp_before", "new", T0)
    assert claimed is not None
    assert claimed.attempts == 1
    await rollback_all(empty.database, down_to=ATTEMPT_MIGRATIONS[0])
    assert "attempts" not in await import_columns(empty)


async def import_columns(empty: EmptyDatabase) -> frozenset[str]:
    rows = await empty.database.fetch(
        IMPORTS.statement(
            "SELECT name FROM pragma_table_info('lead_imports')"
            if empty.database.kind == "sqlite"
            else "SELECT column_name AS name FROM information_schema.columns"
            " WHERE table_name = 'lead_imports'"
        )
    )
    return frozenset(row["name"] for row in rows)
