"""Retention (issue 28): what a purge finds its rows by. Idempotency claims by age; a
campaign recipient by its message (partial: only recipients whose message was given an
id, and the purge clears it), so that a purged message's recipient is unlinked without
walking its campaign."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-27T19:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "retention indexes"

FORWARDS = (
    "CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at)",
    "CREATE INDEX IF NOT EXISTS campaign_recipients_message"
    " ON campaign_recipients (message_id) WHERE message_id IS NOT NULL",
)
BACKWARDS = (
    "DROP INDEX IF EXISTS campaign_recipients_message",
    "DROP INDEX IF EXISTS idempotency_keys_created",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
