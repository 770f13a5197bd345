"""Migrations that are plain SQL (what Piccolo's column options cannot express, such as
composite indexes): one statement list forwards, one backwards."""

from __future__ import annotations

from collections.abc import Sequence

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.engine.postgres import PostgresEngine


def sql_migration(
    migration_id: str,
    description: str,
    forwards: Sequence[str],
    backwards: Sequence[str],
    *,
    postgres_only: bool = False,
) -> MigrationManager:
    """``postgres_only``: the statements are Postgres' own (a GIN index); on SQLite the
    migration is recorded and does nothing."""
    manager = MigrationManager(
        migration_id=migration_id, app_name="leadmail", description=description
    )

    async def run(statements: Sequence[str]) -> None:
        engine = engine_finder()  # the database `leadmail migrate` bound
        assert engine is not None
        if postgres_only and not isinstance(engine, PostgresEngine):
            return
        for statement in statements:
            await engine.run_ddl(statement)

    async def apply() -> None:
        await run(forwards)

    async def undo() -> None:
        await run(backwards)

    manager.add_raw(apply)
    manager.add_raw_backwards(undo)
    return manager
