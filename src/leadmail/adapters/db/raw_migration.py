"""Migrations that are plain SQL (what Piccolo's column options cannot express, such as
composite indexes): one statement list forwards, one backwards; or a generated migration's
tables with such SQL after them, in one migration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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


@dataclass
class TablesThenSql(MigrationManager):
    """A generated migration (its tables and columns, as Piccolo's auto migrations read
    them) with plain SQL run after them in the same transaction: forwards, the tables
    then ``sql_forwards`` (indexes on the new tables); backwards, ``sql_backwards`` then
    the tables dropped. (Piccolo runs a migration's raw steps before its tables.)"""

    sql_forwards: Sequence[str] = ()
    sql_backwards: Sequence[str] = ()
    # Forwards, after ``sql_forwards``: statements for one kind of database only, by kind
    # ("postgres", "sqlite"), where the two dialects differ (JSON functions, a backfill).
    sql_forwards_by_kind: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # Backwards, before ``sql_backwards``: likewise, by kind (a trigger's DROP).
    sql_backwards_by_kind: Mapping[str, Sequence[str]] = field(default_factory=dict)

    async def run(self, backwards: bool = False) -> None:
        engine = engine_finder()  # the database `leadmail migrate` bound
        assert engine is not None
        kind = "postgres" if isinstance(engine, PostgresEngine) else "sqlite"
        async with engine.transaction():  # the steps below join it
            if backwards and not self.preview:
                undo = (*self.sql_backwards_by_kind.get(kind, ()), *self.sql_backwards)
                for statement in undo:
                    await engine.run_ddl(statement)
            await super().run(backwards=backwards)
            if not backwards and not self.preview:
                for statement in (*self.sql_forwards, *self.sql_forwards_by_kind.get(kind, ())):
                    await engine.run_ddl(statement)


class PostgresOnly(MigrationManager):
    """A generated migration whose steps only Postgres needs (a column's type widened:
    SQLite enforces no length, and Piccolo cannot alter its columns): on SQLite it is
    recorded and does nothing. Its steps stay in Piccolo's own form, so the next
    ``migrations new --auto`` reads the tables as they now are."""

    async def run(self, backwards: bool = False) -> None:
        engine = engine_finder()  # the database `leadmail migrate` bound
        assert engine is not None
        if isinstance(engine, PostgresEngine):
            await super().run(backwards=backwards)
