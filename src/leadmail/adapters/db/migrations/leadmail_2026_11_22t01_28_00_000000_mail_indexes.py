"""Indexes Piccolo's column options cannot express: one claim per idempotency key within an
account (what makes concurrent claims safe: the upsert's conflict target), and an account's
messages by time."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

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
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    async def create() -> None:
        engine = engine_finder()
        assert engine is not None
        for statement in FORWARDS:
            await engine.run_ddl(statement)

    async def drop() -> None:
        engine = engine_finder()
        assert engine is not None
        for statement in BACKWARDS:
            await engine.run_ddl(statement)

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
