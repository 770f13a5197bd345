"""The messages' (account_id, created_at) index dropped: no query reads messages by time
(a message is read by its id), so it only cost every send an index entry, and it made the
planner's generic plan for "this account's message by id" scan the account's messages
while the table had no statistics (bench/README.md, "Issue 16"). A listing of messages,
when there is one, brings the index its query needs."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-24T11:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "drop the unused messages-by-time index"

FORWARDS = ("DROP INDEX IF EXISTS messages_account_created",)
BACKWARDS = (
    "CREATE INDEX IF NOT EXISTS messages_account_created ON messages (account_id, created_at)",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
