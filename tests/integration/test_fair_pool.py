"""The Postgres pool is entered first come, first served.

asyncpg alone hands a connection that comes back to whichever task asks first, even a
task that arrived after others had been waiting; under load some requests then lose many
times in a row (the tail of the latency). Database.pool puts a FIFO gate in front.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.pool import FairPool

pytestmark = pytest.mark.postgres


@pytest.fixture
async def database(postgres_url: str) -> AsyncIterator[Database]:
    async with Database.from_url(postgres_url, pool_min=1, pool_max=1).running() as db:
        yield db


def fair_pool(database: Database) -> FairPool:
    pool = database.pool
    assert pool is not None
    return pool


async def test_a_newcomer_does_not_overtake_a_waiting_task(database: Database) -> None:
    """One connection. A holds it, W waits for it; N asks just as A gives it back, in the
    turn of the event loop before W's (where asyncpg alone would give it to N)."""
    pool = fair_pool(database)
    loop = asyncio.get_running_loop()
    served: list[str] = []
    a_may_release = asyncio.Event()
    n_may_ask = asyncio.Event()

    async def holder() -> None:
        async with pool.acquire() as connection:
            served.append("A")
            await connection.execute("SELECT 1")
            await a_may_release.wait()
            # Runs N's wake-up ahead of everything the release below schedules.
            loop.call_soon(n_may_ask.set)

    async def user(name: str, go: asyncio.Event | None = None) -> None:
        if go is not None:
            await go.wait()
        await pool.execute("SELECT 1")
        served.append(name)

    a = asyncio.create_task(holder())
    while not served:
        await asyncio.sleep(0.001)
    n = asyncio.create_task(user("N", n_may_ask))
    w = asyncio.create_task(user("W"))
    await asyncio.sleep(0.05)  # W is now waiting for the connection
    a_may_release.set()
    await asyncio.wait_for(asyncio.gather(a, n, w), 10)

    assert served == ["A", "W", "N"]


async def test_under_contention_every_task_gets_its_turn_in_order(database: Database) -> None:
    pool = fair_pool(database)
    order: list[int] = []

    async def ask(i: int) -> None:
        await pool.fetchrow("SELECT $1::int AS i", i)
        order.append(i)

    tasks = []
    for i in range(30):
        tasks.append(asyncio.create_task(ask(i)))
        await asyncio.sleep(0)  # each one asks before the next is created
    await asyncio.wait_for(asyncio.gather(*tasks), 10)

    assert order == list(range(30))


async def test_a_cancelled_waiter_gives_its_turn_to_the_next(database: Database) -> None:
    pool = fair_pool(database)
    release = asyncio.Event()

    async def hold() -> None:
        async with pool.acquire():
            await release.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0.05)
    cancelled = asyncio.create_task(pool.execute("SELECT 1"))
    after = asyncio.create_task(pool.fetchrow("SELECT 2 AS two"))
    await asyncio.sleep(0.05)
    cancelled.cancel()
    release.set()

    row = await asyncio.wait_for(after, 10)
    await holder
    assert row is not None
    assert row["two"] == 2
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert await asyncio.wait_for(pool.execute("SELECT 3"), 10) == "SELECT 1"


async def test_sqlite_has_no_pool(tmp_path: object) -> None:
    assert Database.from_url(f"sqlite:///{tmp_path}/x.db").pool is None


async def test_piccolo_queries_queue_at_the_same_gate(database: Database) -> None:
    """The newcomer N is a query Piccolo runs itself, through its engine's pool: asking
    just as the connection comes back, it still goes after the waiting W."""
    pool = fair_pool(database)
    loop = asyncio.get_running_loop()
    served: list[str] = []
    a_may_release = asyncio.Event()
    n_may_ask = asyncio.Event()

    async def holder() -> None:
        connection = await pool.acquire()  # Piccolo's own way: await, then release()
        served.append("A")
        await a_may_release.wait()
        loop.call_soon(n_may_ask.set)
        await pool.release(connection)

    async def waiting() -> None:
        await pool.execute("SELECT 1")
        served.append("W")

    async def piccolo_newcomer() -> None:
        await n_may_ask.wait()
        await database.engine.run_ddl("SELECT 1")
        served.append("N")

    a = asyncio.create_task(holder())
    while not served:
        await asyncio.sleep(0.001)
    n = asyncio.create_task(piccolo_newcomer())
    w = asyncio.create_task(waiting())
    await asyncio.sleep(0.05)
    a_may_release.set()
    await asyncio.wait_for(asyncio.gather(a, n, w), 10)

    assert served == ["A", "W", "N"]


async def test_releasing_twice_frees_one_place_only(database: Database) -> None:
    pool = fair_pool(database)
    connection = await pool.acquire()
    await pool.release(connection)
    await pool.release(connection)  # asyncpg ignores it; so must the gate

    held = await pool.acquire()
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.execute("SELECT 1"), 0.2)
    finally:
        await pool.release(held)
    assert await asyncio.wait_for(pool.execute("SELECT 1"), 5) == "SELECT 1"
