"""The database's readiness: it answers a query, and every migration this code ships is
applied (``leadmail migrate`` has run)."""

from __future__ import annotations

import asyncio

from piccolo.apps.migrations.commands.base import BaseMigrationManager

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import applied_migrations
from leadmail.adapters.db.piccolo_app import APP_CONFIG
from leadmail.adapters.db.statements import plain_statement
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.readiness import ReadinessProbe

_PING = plain_statement("SELECT 1 AS one")


def shipped_migrations() -> frozenset[str]:
    """The ids of the migrations in this code's migrations folder."""
    modules = BaseMigrationManager().get_migration_modules(str(APP_CONFIG.migrations_folder_path))
    return frozenset(modules)


class DatabaseReadiness(ReadinessProbe):
    """``timeout``: how long the probe waits for the database before calling it
    unreachable (a readiness check is asked every few seconds; it must not hang)."""

    def __init__(self, database: Database, *, timeout: float = 2.0) -> None:
        self._db = database
        self._timeout = timeout
        self._shipped: frozenset[str] | None = None  # read when first asked

    async def not_ready(self) -> str | None:
        try:
            async with asyncio.timeout(self._timeout):
                await self._db.fetchrow(_PING)
                applied = set(await applied_migrations(self._db))
        except (StorageUnavailable, TimeoutError, OSError) as e:
            return f"The database is unreachable ({type(e).__name__})"
        if self._shipped is None:
            self._shipped = shipped_migrations()
        pending = len(self._shipped - applied)
        if pending:
            return (
                f"{pending} database migration(s) not applied yet:"
                " run `leadmail migrate` (or start with LEADMAIL_MIGRATE_ON_START=true)"
            )
        return None
