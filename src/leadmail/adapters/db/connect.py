"""Which database a URL names, and the Piccolo engine that reaches it."""

from __future__ import annotations

import os
import weakref
from typing import Any

import aiosqlite
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine, SQLiteTransaction, TransactionType, dict_factory

from leadmail.adapters.db.lead_segments import SQLITE_FOLD, SQLITE_SEARCH
from leadmail.domain.text_match import fold, search_matches

SQLITE_PREFIX = "sqlite:///"
SQLITE_BUSY_TIMEOUT_S = 30.0
# A new database file: owner read and write only. It holds leads' addresses and the API
# keys' digests; a world-readable default (0644 under the usual umask) shares them with
# every account on the machine.
SQLITE_FILE_MODE = 0o600


def create_private(path: str) -> None:
    """Create the database file at ``path`` with SQLITE_FILE_MODE, unless it exists: a file
    there keeps its mode (its owner chose it). SQLite gives the -wal and -shm files it makes
    beside it the database file's mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SQLITE_FILE_MODE)
    except OSError:  # there already; or a path SQLite will refuse, with its own error
        return
    os.close(fd)  # an empty file is an empty database to SQLite


def sqlite_path(url: str) -> str:
    """``sqlite:///./leadmail.db`` -> ``./leadmail.db``; ``sqlite:////x.db`` -> ``/x.db``."""
    path = url.removeprefix(SQLITE_PREFIX)
    if not path or path == ":memory:":
        raise ValueError("SQLite needs a file path (an in-memory database is not supported)")
    return path


class DeferredPostgresEngine(PostgresEngine):
    """Piccolo's engine checks the server version in its constructor, connecting and
    blocking the caller (an event loop, even) for up to the connect timeout. Building an
    engine should not touch the network: ``Database.start`` is where we connect."""

    async def check_version(self) -> None:
        return None


class ClosingTransaction(SQLiteTransaction):
    """Piccolo's SQLite transaction, whose connection is closed whatever happens to it.

    Piccolo's leaves the connection open when ``BEGIN`` or ``ROLLBACK`` is interrupted: a
    task cancelled while its ``BEGIN IMMEDIATE`` waits for the write lock (a server
    stopping, a client gone). aiosqlite runs each connection in a thread that is not a
    daemon, so such a connection keeps the process from exiting, and once its ``BEGIN``
    gets the lock, keeps every other writer waiting."""

    __slots__ = ()

    async def __aenter__(self) -> SQLiteTransaction:
        try:
            return await super().__aenter__()
        except BaseException:
            if self._parent is None and getattr(self, "connection", None) is not None:
                self.connection.stop()  # closes it and ends its thread; nothing to await
            raise

    async def __aexit__(self, exception_type: Any, exception: Any, traceback: Any) -> bool:
        try:
            return await super().__aexit__(exception_type, exception, traceback)
        except BaseException:
            if self._parent is None:  # the rollback, commit or close interrupted
                self.connection.stop()  # uncommitted: SQLite rolls back as it closes
                self.engine.current_transaction.reset(self.context)
            raise


class LeadmailSQLiteEngine(SQLiteEngine):
    """Piccolo's SQLite engine, each connection given the domain's own text functions
    (lead_segments.py calls them), so a search and a custom text field compare exactly as
    the domain and Postgres do. The first connection makes the file, if it is new, private
    (create_private).

    No connection outlives the task that opened it (ClosingTransaction; a connection whose
    set-up is interrupted is closed), and ``close_left_open`` closes any that did, as the
    database closes: an open connection's thread would keep the process from exiting."""

    _file_ready = False

    def __init__(self, path: str, **connection_kwargs: Any) -> None:
        super().__init__(path=path, **connection_kwargs)
        self._open: weakref.WeakSet[aiosqlite.Connection] = weakref.WeakSet()

    async def get_connection(self) -> Any:
        if not self._file_ready:
            create_private(self.path)
            self._file_ready = True
        connection = await aiosqlite.connect(**self.connection_kwargs)  # closed if cancelled
        try:
            connection.row_factory = dict_factory  # type: ignore[assignment]
            await connection.execute("PRAGMA foreign_keys = 1")
            await connection.create_function(SQLITE_FOLD, 1, _fold, deterministic=True)
            await connection.create_function(SQLITE_SEARCH, 3, _search, deterministic=True)
        except BaseException:
            connection.stop()
            raise
        self._open.add(connection)
        return connection

    def transaction(
        self,
        transaction_type: TransactionType = TransactionType.deferred,
        allow_nested: bool = True,
    ) -> SQLiteTransaction:
        return ClosingTransaction(
            engine=self, transaction_type=transaction_type, allow_nested=allow_nested
        )

    def close_left_open(self) -> int:
        """Close every connection still open (each ends its thread); how many there were."""
        left = [c for c in self._open if c._connection is not None]
        for connection in left:
            connection.stop()
        self._open.clear()
        return len(left)

    async def _run_in_new_connection(
        self,
        query: str,
        args: list[Any] | None = None,
        query_type: str = "generic",
        table: Any = None,
    ) -> Any:
        """A statement outside a transaction: Piccolo opens its own connection here, not
        through get_connection; this one does (the functions), then commits and closes."""
        connection = await self.get_connection()
        try:
            rows = await self._run_in_existing_connection(
                connection, query, args, query_type, table
            )
            await connection.commit()
            return rows
        finally:
            await connection.close()  # aiosqlite ends the thread even if this is cancelled


def _fold(text: object) -> str | None:
    return fold(text) if isinstance(text, str) else None


def _search(name: object, email_key: object, search: object) -> bool:
    if not (isinstance(name, str) and isinstance(email_key, str) and isinstance(search, str)):
        return False
    return search_matches(name, email_key, search)


def engine_for_url(
    url: str, *, connect_timeout: float = 5.0, command_timeout: float = 30.0
) -> Engine[Any]:
    if url.startswith(SQLITE_PREFIX):
        return LeadmailSQLiteEngine(path=sqlite_path(url), timeout=SQLITE_BUSY_TIMEOUT_S)
    if url.startswith(("postgres://", "postgresql://")):
        return DeferredPostgresEngine(
            config={"dsn": url, "timeout": connect_timeout, "command_timeout": command_timeout}
        )
    raise ValueError("database URL must start with sqlite:///, postgresql:// or postgres://")
