"""The Postgres connection pool, entered first come, first served.

asyncpg hands a freed connection to whichever task asks next. Under load a request that
has just arrived often asks before the one woken for that connection runs, which then
queues again at the back: some requests lose many times in a row (the p99 grows several
times the p50; bench/README.md has the figures). A FifoGate of the pool's size admits
tasks in arrival order, so the pool itself never has a queue to barge into.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Generator
from typing import Any

import asyncpg
from prometheus_client import Gauge

from leadmail.adapters.db.errors import translate_errors


class FifoGate:
    """At most ``size`` holders at a time; the others wait in arrival order, and a holder
    leaving hands its place straight to the oldest waiter, so a newcomer can never take it
    first. (asyncio.Semaphore does the same since 3.11.1, at a higher cost per entry.)"""

    __slots__ = ("_free", "_waiters")

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def __aenter__(self) -> None:
        if self._free:  # (a live waiter exists only while nothing is free)
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a place as it was cancelled: pass it on
            raise  # (a cancelled waiter left in the queue is skipped by release)

    def release(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    async def __aexit__(self, *_: object) -> None:
        self.release()

    # Entered with ``async with``, or held across calls (a connection handed out).
    acquire = __aenter__


# Connections lent out (a query running, or held by a transaction), every pool of the
# process; with several processes, their sum (GET /metrics).
IN_USE = Gauge(
    "leadmail_db_pool_connections_in_use",
    "Postgres connections of the pools in use",
    multiprocess_mode="livesum",
)


class FairPool:
    """An asyncpg pool behind a FifoGate of its size, through asyncpg's public Pool API.

    It is what Piccolo's engine uses as its pool too (``engine.pool``), so Piccolo's
    queries and transactions queue at the same gate as the statements run directly: it
    offers what Piccolo uses of a pool (``async with acquire()``, ``await acquire()`` then
    ``release()``, ``close()``) and the three query methods the adapters use.
    """

    def __init__(self, raw: asyncpg.Pool, size: int) -> None:
        self._raw = raw
        self._gate = FifoGate(size)
        self._held: set[int] = set()  # ids of connections handed out through the gate

    def acquire(self) -> _FairAcquire:
        return _FairAcquire(self)

    async def release(self, connection: Any) -> None:
        try:
            await self._raw.release(connection)
        finally:
            if id(connection) in self._held:  # a second release must not free a place
                self._held.discard(id(connection))
                self._gate.release()
                IN_USE.dec()

    # The three query methods translate driver errors (errors.py) as they run.

    async def execute(self, query: str, *args: object) -> str:
        with translate_errors():
            async with self._gate:
                IN_USE.inc()
                try:
                    result: str = await self._raw.execute(query, *args)
                finally:
                    IN_USE.dec()
                return result

    async def fetchrow(self, query: str, *args: object) -> asyncpg.Record | None:
        with translate_errors():
            async with self._gate:
                IN_USE.inc()
                try:
                    return await self._raw.fetchrow(query, *args)
                finally:
                    IN_USE.dec()

    async def fetch(self, query: str, *args: object) -> list[asyncpg.Record]:
        with translate_errors():
            async with self._gate:
                IN_USE.inc()
                try:
                    rows: list[asyncpg.Record] = await self._raw.fetch(query, *args)
                finally:
                    IN_USE.dec()
                return rows

    async def close(self) -> None:
        await self._raw.close()

    async def _take(self) -> Any:
        await self._gate.acquire()
        try:
            connection = await self._raw.acquire()
        except BaseException:
            self._gate.release()
            raise
        self._held.add(id(connection))
        IN_USE.inc()
        return connection


class _FairAcquire:
    """What FairPool.acquire() returns: awaitable, or an async context manager that
    releases on exit, as asyncpg's own."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: FairPool) -> None:
        self._pool = pool
        self._connection: Any = None

    def __await__(self) -> Generator[Any, None, Any]:
        return self._pool._take().__await__()

    async def __aenter__(self) -> Any:
        self._connection = await self._pool._take()
        return self._connection

    async def __aexit__(self, *_: object) -> None:
        await self._pool.release(self._connection)


async def light_reset(connection: asyncpg.Connection) -> None:
    """What a pooled connection needs on release. The default reset runs a second query
    (unlock advisory locks, UNLISTEN, RESET ALL) after every use; pooled connections here
    never hold such state (LISTEN and advisory locks use dedicated connections), so only
    an abandoned transaction is undone."""
    if connection.is_in_transaction():
        await connection.execute("ROLLBACK")
