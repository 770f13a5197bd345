"""Postgres only: pgqueuer's tables, types, trigger and function (the job queue that runs
lead imports, and campaigns next), created by pgqueuer's own install DDL, as `pgqueuer
install` would run it; undone by its uninstall DDL. SQLite runs jobs in process."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder
from piccolo.engine.postgres import PostgresEngine

ID = "2026-11-24T12:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "pgqueuer job queue"


async def _run(script: str) -> None:
    engine = engine_finder()  # the database `leadmail migrate` bound
    if not isinstance(engine, PostgresEngine):
        return
    # Several statements (a function body among them): the simple query protocol, which
    # a statement without parameters uses, on a connection of its own.
    connection = await engine.get_new_connection()
    try:
        await connection.execute(script)
    finally:
        await connection.close()


async def forwards() -> MigrationManager:
    # Imported here: every command reads the migration modules to learn which are applied.
    from pgqueuer.adapters.persistence.qb import QueryBuilderEnvironment

    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)
    queue = QueryBuilderEnvironment()

    async def install() -> None:
        await _run(queue.build_install_query(create_schema=False))

    async def uninstall() -> None:
        await _run(queue.build_uninstall_query())

    manager.add_raw(install)
    manager.add_raw_backwards(uninstall)
    return manager
