"""Indexes Piccolo's column options cannot express: an account's messages by time, under
the table's new name, and an account's leads by phone (only leads that have one)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-24T07:54:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "messages by account and time; leads by phone"

FORWARDS = (
    "DROP INDEX IF EXISTS email_messages_account_created",
    "CREATE INDEX IF NOT EXISTS messages_account_created ON messages (account_id, created_at)",
    "CREATE INDEX IF NOT EXISTS leads_account_phone ON leads (account_id, phone) WHERE phone <> ''",
)
BACKWARDS = (
    "DROP INDEX IF EXISTS leads_account_phone",
    "DROP INDEX IF EXISTS messages_account_created",
    "CREATE INDEX IF NOT EXISTS email_messages_account_created"
    " ON messages (account_id, created_at)",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
