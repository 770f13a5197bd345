"""Indexes Piccolo's column options cannot express: one claim per idempotency key within an
account (what makes concurrent claims safe: the upsert's conflict target), and an account's
messages by time."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-22T01:28:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "unique idempotency key per account; messages by account and time"

FORWARDS = (
    "CREATE UNIQUE INDEX IF NOT EXISTS idempotency_keys_account_key"
    ' ON idempotency_keys (account_id, "key")',
    "CREATE INDEX IF NOT EXISTS email_messages_account_created"
    " ON email_messages (account_id, created_at)",
)
BACKWARDS = (
    "DROP INDEX IF EXISTS email_messages_account_created",
    "DROP INDEX IF EXISTS idempotency_keys_account_key",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
