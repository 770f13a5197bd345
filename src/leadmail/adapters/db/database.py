"""One database, SQLite or Postgres: started, closed, and the statements of the adapters
run on it, inside a transaction when one is open."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import asyncpg
import structlog
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine, TransactionType
from piccolo.querystring import QueryString

from leadmail.adapters.db.connect import LeadmailSQLiteEngine, engine_for_url
from leadmail.adapters.db.errors import translate_errors
from leadmail.adapters.db.opening import postgres_refusal, sqlite_problem
from leadmail.adapters.db.pool import FairPool, light_reset
from leadmail.adapters.db.statements import Row, Statement
from leadmail.adapters.db.tables import Tables, build_tables

T = TypeVar("T")
log = structlog.get_logger("leadmail.db")


@dataclass
class Database:
    """An engine, its tables, and how to read and write it safely.

    SQLite allows one writer at a time; writes from this process queue on a lock instead
    of failing with "database is locked", and the busy timeout covers other processes
    (the CLI, say). On Postgres there is no such lock.
    """

    engine: Engine[Any]
    kind: Literal["sqlite", "postgres"]
    pool_min: int = 2
    pool_max: int = 10
    # False: a SQLite file that is not there is StorageMisconfigured, not a new empty
    # database (commands that only read).
    create: bool = True
    tables: Tables = field(init=False)
    _pool: FairPool | None = field(init=False, default=None)
    _write_lock: asyncio.Lock | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.tables = build_tables(self.engine)
        # Piccolo's transaction of the running task, if any (a ContextVar of the engine).
        self._transaction = self.engine.current_transaction

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        pool_min: int = 2,
        pool_max: int = 10,
        connect_timeout: float = 5.0,
        command_timeout: float = 30.0,
        create: bool = True,
    ) -> Database:
        engine = engine_for_url(
            url, connect_timeout=connect_timeout, command_timeout=command_timeout
        )
        kind: Literal["sqlite", "postgres"] = (
            "sqlite" if isinstance(engine, SQLiteEngine) else "postgres"
        )
        return cls(engine=engine, kind=kind, pool_min=pool_min, pool_max=pool_max, create=create)

    async def start(self) -> None:
        """Connected (Postgres: the pool's first connections). A database that cannot be
        opened raises StorageMisconfigured or StorageUnavailable naming it (opening.py)."""
        if isinstance(self.engine, PostgresEngine):
            with translate_errors():  # (what postgres_refusal does not word)
                try:
                    raw = await asyncpg.create_pool(
                        **self.engine.config,
                        min_size=self.pool_min,
                        max_size=self.pool_max,
                        reset=light_reset,
                    )
                except (TimeoutError, OSError, asyncpg.PostgresError) as e:
                    raise postgres_refusal(e, self.engine.config["dsn"]) from e
            self._pool = FairPool(raw, self.pool_max)
            # Piccolo's queries and transactions take their connections from it too.
            self.engine.pool = self._pool
            return
        assert isinstance(self.engine, SQLiteEngine)
        problem = sqlite_problem(self.engine.path, create=self.create)
        if problem is not None:  # before SQLite is asked: it would make the file, or fail
            raise problem
        with translate_errors():
            # WAL lets readers proceed while one writer writes; it persists in the file.
            await self.engine.run_ddl("PRAGMA journal_mode=WAL")

    async def close(self) -> None:
        if isinstance(self.engine, PostgresEngine) and self._pool is not None:
            self.engine.pool = None
            pool, self._pool = self._pool, None
            await pool.close()
        if isinstance(self.engine, LeadmailSQLiteEngine) and (
            left := self.engine.close_left_open()
        ):
            log.warning("sqlite_connections_left_open", connections=left)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Database]:
        """Started on entry, closed on exit."""
        await self.start()
        try:
            yield self
        finally:
            await self.close()

    @property
    def pool(self) -> FairPool | None:
        """The Postgres pool (None on SQLite, or before start())."""
        return self._pool

    async def connect_dedicated(self, name: str = "") -> asyncpg.Connection:
        """A Postgres connection of its own, outside the pool (to LISTEN, or to hold an
        advisory lock); ``name``: its application_name (pg_stat_activity shows it)."""
        if not isinstance(self.engine, PostgresEngine):
            raise TypeError("only a Postgres database has dedicated connections")
        settings = {"server_settings": {"application_name": name}} if name else {}
        return await asyncpg.connect(**self.engine.config, **settings)

    def writing(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold this around a write made with Piccolo's query builder, and around every
        transaction: SQLite's one writer at a time. (Statements run here hold it by
        themselves.) Postgres needs no lock."""
        if self.kind == "postgres":
            return contextlib.nullcontext()
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        return self._write_lock

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Statements run here and Piccolo's queries inside it share one transaction."""
        if isinstance(self.engine, SQLiteEngine):
            # IMMEDIATE takes SQLite's write lock up front: no deadlock upgrading a read.
            immediate = self.engine.transaction(transaction_type=TransactionType.immediate)
            async with self.writing(), immediate:
                yield
        elif isinstance(self.engine, PostgresEngine):
            async with self.engine.transaction():
                yield

    # Statements.

    # fetch, fetchrow and execute hand back the coroutine that does the work (the pool's,
    # which translates driver errors itself), rather than awaiting it in one more frame.

    def fetch(self, statement: Statement, *args: Any) -> Awaitable[Sequence[Row]]:
        pool = self._pool
        if pool is None:
            return self._sqlite(statement, args)
        transaction = self._transaction.get()
        if transaction is None:
            return pool.fetch(statement.postgres, *args)
        return _translated(transaction.connection.fetch(statement.postgres, *args))

    def fetchrow(self, statement: Statement, *args: Any) -> Awaitable[Row | None]:
        pool = self._pool
        if pool is None:
            return _first(self._sqlite(statement, args))
        transaction = self._transaction.get()
        if transaction is None:
            return pool.fetchrow(statement.postgres, *args)
        return _translated(transaction.connection.fetchrow(statement.postgres, *args))

    def execute(self, statement: Statement, *args: Any) -> Awaitable[Any]:
        pool = self._pool
        if pool is None:
            return self._sqlite(statement, args)
        transaction = self._transaction.get()
        if transaction is None:
            return pool.execute(statement.postgres, *args)
        return _translated(transaction.connection.execute(statement.postgres, *args))

    def execute_many(self, statement: Statement, rows: Sequence[Sequence[Any]]) -> Awaitable[Any]:
        """The statement once per row, all or none (one pipelined round on Postgres)."""
        if len(rows) == 1:  # one statement is all or none by itself, and one round trip
            return self.execute(statement, *rows[0])
        return self._execute_many(statement, rows)

    async def _execute_many(self, statement: Statement, rows: Sequence[Sequence[Any]]) -> None:
        with translate_errors():
            pool = self._pool
            if pool is not None:
                transaction = self._transaction.get()
                if transaction is not None:
                    await transaction.connection.executemany(statement.postgres, rows)
                    return
                # asyncpg's executemany is atomic by itself (one implicit transaction,
                # ended by its one Sync): no BEGIN and COMMIT round trips around it.
                async with pool.acquire() as connection:
                    await connection.executemany(statement.postgres, rows)
                return
            async with self.transaction():
                # One connection, one statement at a time.
                for row in rows:
                    await self._sqlite(statement, row)

    async def _sqlite(self, statement: Statement, args: Sequence[Any]) -> list[Row]:
        query = QueryString(statement.sqlite, *args)
        with translate_errors():
            if statement.writes and self._transaction.get() is None:
                async with self.writing():
                    rows: list[Row] = await self.engine.run_querystring(query)
                    return rows
            return await self.engine.run_querystring(query)  # type: ignore[no-any-return]


async def _translated(work: Awaitable[T]) -> T:
    with translate_errors():
        return await work


async def _first(rows: Awaitable[Sequence[Row]]) -> Row | None:
    found = await rows
    return found[0] if found else None
