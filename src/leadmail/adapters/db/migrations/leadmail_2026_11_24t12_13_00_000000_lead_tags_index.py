"""Postgres only: a GIN index on a lead's tags, which a tag filter (``tags @> ...``,
``tags && ...``) reads, and statistics for the planner (bench/README.md, "Tags and
segments": this Postgres has autovacuum off, and a table never analyzed plans blind).
SQLite has no GIN; its tag filters read the account's leads."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-24T12:13:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "GIN index on lead tags"

FORWARDS = (
    "CREATE INDEX IF NOT EXISTS leads_tags ON leads USING gin (tags)",
    "ANALYZE leads",
)
BACKWARDS = ("DROP INDEX IF EXISTS leads_tags",)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS, postgres_only=True)
