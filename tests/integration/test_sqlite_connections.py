"""Every SQLite connection ends with the task that opened it, cancelled or not.

aiosqlite runs each connection in a thread of its own, which is not a daemon: a connection
left open keeps its thread, so the process cannot exit (``leadmail serve`` then ignores
SIGTERM: the interpreter waits for the thread at exit), and, when the connection got the
write lock first, no other writer can write. A task is cancelled (a server stopping, a
client gone) at any await, among them the wait for the write lock in ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from leadmail.adapters.db.connect import SQLITE_PREFIX, LeadmailSQLiteEngine
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.db.statements import plain_statement

WORKER = "_connection_worker_thread"  # aiosqlite's thread function, in its threads' names
SETTLE_S = 5.0
TOUCH = plain_statement(
    "INSERT INTO installation_secrets (name, value, created_at) "
    "VALUES ('probe', 'x', CURRENT_TIMESTAMP) "
    "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
)
PROBE = plain_statement("SELECT value FROM installation_secrets WHERE name = 'probe'")


def connection_threads() -> int:
    return sum(1 for t in threading.enumerate() if WORKER in t.name and t.is_alive())


async def settled(expected: int) -> int:
    """The count of connection threads once it falls to ``expected`` (or after SETTLE_S:
    a connection left open keeps its thread for good)."""
    deadline = time.monotonic() + SETTLE_S
    while connection_threads() > expected and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return connection_threads()


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    async with Database.from_url(f"{SQLITE_PREFIX}{tmp_path / 'leadmail.db'}").running() as db:
        await migrate(db)
        yield db


@pytest.fixture
def write_lock(database: Database) -> Iterator[sqlite3.Connection]:
    """Another connection (another process, as SQLite sees it) holding the write lock."""
    assert database.kind == "sqlite"
    holder = sqlite3.connect(database.engine.path, isolation_level=None)  # type: ignore[attr-defined]
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield holder
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()


async def test_a_transaction_cancelled_while_it_waits_for_the_write_lock_closes(
    database: Database, write_lock: sqlite3.Connection
) -> None:
    before = await settled(0)  # the threads of connections closed before, ended
    entered = asyncio.Event()

    async def write() -> None:
        async with database.transaction():
            entered.set()  # never reached: the lock is held until the task is cancelled
            await database.execute(TOUCH)

    task = asyncio.create_task(write())
    await asyncio.sleep(0.3)  # in BEGIN IMMEDIATE, waiting for the lock
    assert connection_threads() == before + 1
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    write_lock.execute("ROLLBACK")  # the lock is free: the waiting BEGIN now takes it

    assert not entered.is_set()
    assert await settled(before) <= before
    # No connection holds the lock the cancelled BEGIN took: a write goes through at once.
    await asyncio.wait_for(database.execute(TOUCH), timeout=2.0)


async def test_a_transaction_cancelled_in_its_body_rolls_back_and_closes(
    database: Database,
) -> None:
    before = await settled(0)  # the threads of connections closed before, ended
    inside = asyncio.Event()

    async def write() -> None:
        async with database.transaction():
            await database.execute(TOUCH)
            inside.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(write())
    await asyncio.wait_for(inside.wait(), timeout=5.0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    assert await settled(before) <= before
    assert await database.fetch(PROBE) == []  # rolled back


async def test_statements_cancelled_at_every_moment_leave_no_connection_open(
    database: Database,
) -> None:
    """A statement outside a transaction, cancelled after 0, 1, 2 ... ms: wherever the
    cancellation lands (connecting, setting the connection up, running, closing)."""
    before = await settled(0)  # the threads of connections closed before, ended
    for delay_ms in range(0, 30):
        task = asyncio.ensure_future(database.execute(TOUCH))
        await asyncio.sleep(delay_ms / 1000)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    assert await settled(before) <= before


async def test_closing_the_database_ends_a_connection_left_open(tmp_path: Path) -> None:
    """The last line of defence: whatever left a connection open, closing the database
    closes it, so the process can exit."""
    before = await settled(0)  # the threads of connections closed before, ended
    database = Database.from_url(f"{SQLITE_PREFIX}{tmp_path / 'leadmail.db'}")
    await database.start()
    assert isinstance(database.engine, LeadmailSQLiteEngine)
    left_open = await database.engine.get_connection()
    assert connection_threads() == before + 1

    await database.close()

    assert await settled(before) <= before
    with pytest.raises(ValueError, match=r"closed|no active connection"):
        await left_open.execute("SELECT 1")
