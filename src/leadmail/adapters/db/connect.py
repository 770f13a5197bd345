"""Which database a URL names, and the Piccolo engine that reaches it."""

from __future__ import annotations

from typing import Any

from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine

SQLITE_PREFIX = "sqlite:///"
SQLITE_BUSY_TIMEOUT_S = 30.0


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


def engine_for_url(
    url: str, *, connect_timeout: float = 5.0, command_timeout: float = 30.0
) -> Engine[Any]:
    if url.startswith(SQLITE_PREFIX):
        return SQLiteEngine(path=sqlite_path(url), timeout=SQLITE_BUSY_TIMEOUT_S)
    if url.startswith(("postgres://", "postgresql://")):
        return DeferredPostgresEngine(
            config={"dsn": url, "timeout": connect_timeout, "command_timeout": command_timeout}
        )
    raise ValueError("database URL must start with sqlite:///, postgresql:// or postgres://")
