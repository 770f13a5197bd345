"""The suppression list of one reason, newest first (GET /api/v1/suppressions?reason=...):
without it a page of a rare reason walked the account's whole listing index, filtering."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-26T20:41:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "suppressions by reason"

FORWARDS = (
    "CREATE INDEX IF NOT EXISTS suppressions_reason"
    " ON suppressions (account_id, reason, created_at DESC, digest DESC)",
)
BACKWARDS = ("DROP INDEX IF EXISTS suppressions_reason",)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
