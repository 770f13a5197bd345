"""Indexes Piccolo's column options cannot express: one chunk per number of an import's
file, one error per row of an import (the error listing's order)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-24T12:49:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "lead import chunk and error indexes"

FORWARDS = (
    "CREATE UNIQUE INDEX IF NOT EXISTS lead_import_chunks_number"
    " ON lead_import_chunks (import_id, number)",
    "CREATE UNIQUE INDEX IF NOT EXISTS lead_import_errors_row"
    " ON lead_import_errors (import_id, row_number)",
    "CREATE INDEX IF NOT EXISTS lead_imports_status ON lead_imports (status)",
)
BACKWARDS = (
    "DROP INDEX IF EXISTS lead_imports_status",
    "DROP INDEX IF EXISTS lead_import_errors_row",
    "DROP INDEX IF EXISTS lead_import_chunks_number",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS)
