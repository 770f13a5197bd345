"""An account's imports, newest first (GET /api/v1/leads/imports): a page walks the index
instead of sorting the account's imports."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-27T07:45:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "imports listing"

FORWARDS = (
    "CREATE INDEX IF NOT EXISTS lead_imports_listing"
    " ON lead_imports (account_id, created_at DESC, import_id DESC)",
)
BACKWARDS = ("DROP INDEX IF EXISTS lead_imports_listing",)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
