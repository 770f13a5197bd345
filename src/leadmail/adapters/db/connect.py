"""Which database a URL names, and the Piccolo engine that reaches it."""

from __future__ import annotations

import os
from typing import Any

from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine

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


class LeadmailSQLiteEngine(SQLiteEngine):
    """Piccolo's SQLite engine, each connection given the domain's own text functions
    (lead_segments.py calls them), so a search and a custom text field compare exactly as
    the domain and Postgres do. The first connection makes the file, if it is new, private
    (create_private)."""

    _file_ready = False

    async def get_connection(self) -> Any:
        if not self._file_ready:
            create_private(self.path)
            self._file_ready = True
        connection = await super().get_connection()
        await connection.create_function(SQLITE_FOLD, 1, _fold, deterministic=True)
        await connection.create_function(SQLITE_SEARCH, 3, _search, deterministic=True)
        return connection

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
            await connection.close()


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
