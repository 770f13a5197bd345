"""Apply Piccolo migrations from code, to the database we were given, idempotently."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
from collections.abc import AsyncIterator

import structlog
from piccolo.apps.migrations.commands.backwards import run_backwards
from piccolo.apps.migrations.commands.forwards import run_forwards
from piccolo.apps.migrations.tables import Migration
from piccolo.engine.postgres import PostgresEngine

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import translate_errors

APP_NAME = "leadmail"
CONF_MODULE = "leadmail.adapters.db.piccolo_conf"
# Any constant will do: it keeps two processes (two workers, serve and the CLI) from
# migrating the same Postgres database at the same moment.
_ADVISORY_LOCK_ID = 0x1EAD_3A11

log = structlog.get_logger("leadmail.db")


class MigrationFailed(RuntimeError):
    pass


def _bind(database: Database) -> None:
    # Piccolo's runner finds its engine through the PICCOLO_CONF module: point both it and
    # the bookkeeping table at this database.
    os.environ["PICCOLO_CONF"] = CONF_MODULE
    conf = importlib.import_module(CONF_MODULE)
    vars(conf)["DB"] = database.engine
    Migration._meta.db = database.engine


@contextlib.asynccontextmanager
async def _exclusive(database: Database) -> AsyncIterator[None]:
    engine = database.engine
    if not isinstance(engine, PostgresEngine):
        async with database.writing():
            yield
        return
    connection = await database.connect_dedicated()
    try:
        await connection.execute("SELECT pg_advisory_lock($1)", _ADVISORY_LOCK_ID)
        yield
    finally:
        await connection.close()  # releases the lock too


async def applied_migrations(database: Database) -> list[str]:
    _bind(database)
    with translate_errors():
        if not await Migration.table_exists():
            return []
        return sorted(await Migration.get_migrations_which_ran(app_name=APP_NAME))


async def migrate(database: Database) -> list[str]:
    """Apply every migration not yet applied; return the ids applied now (empty if none)."""
    _bind(database)
    with translate_errors():
        async with _exclusive(database):
            before = set(await applied_migrations(database))
            # Piccolo reports progress on stdout, which is reserved for command output.
            with contextlib.redirect_stdout(io.StringIO()):
                result = await run_forwards(app_name=APP_NAME)
            if not result.success:
                raise MigrationFailed(result.message or "migration failed")
            after = await applied_migrations(database)
    applied = [m for m in after if m not in before]
    if applied:
        log.info("migrations_applied", migrations=applied)
    return applied


async def rollback_all(database: Database, down_to: str = "all") -> None:
    """Undo every migration, or those from ``down_to`` (a migration id) on (for tests of
    the migrations themselves)."""
    _bind(database)
    with translate_errors(), contextlib.redirect_stdout(io.StringIO()):
        result = await run_backwards(app_name=APP_NAME, migration_id=down_to, auto_agree=True)
    if not result.success:
        raise MigrationFailed(result.message or "rollback failed")
