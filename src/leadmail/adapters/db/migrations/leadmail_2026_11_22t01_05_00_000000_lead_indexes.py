"""Indexes Piccolo's column options cannot express: uniqueness of a lead's email within its
account (case-insensitively, through ``email_key``) and the newest-first listing order."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-22T01:05:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "unique lead email per account; listing index"

FORWARDS = (
    "CREATE UNIQUE INDEX IF NOT EXISTS leads_account_email_key ON leads (account_id, email_key)",
    "CREATE INDEX IF NOT EXISTS leads_account_listing"
    " ON leads (account_id, created_at DESC, lead_id DESC)",
)
BACKWARDS = (
    "DROP INDEX IF EXISTS leads_account_listing",
    "DROP INDEX IF EXISTS leads_account_email_key",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
