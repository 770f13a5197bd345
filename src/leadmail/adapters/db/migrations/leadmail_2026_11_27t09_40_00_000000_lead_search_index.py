"""Postgres only: the trigram index a lead search (``q``) reads, on the text a search looks
in (segments.search_text: a space, the address, a space, the lower-cased name with its
hyphens as spaces, then a hyphenated address or name again without its hyphens), so that ``... LIKE '% ada%'`` finds its leads in one index scan
without reading the account's (lead_segments.SEARCH_TEXT). It needs the
``pg_trgm`` extension (trusted since PostgreSQL 13: a database owner may create it). Where
it cannot be created the search still works, by reading the account's leads: the notice
says so, and the README. SQLite has no such index; its search tests each lead."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-27T09:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "trigram index for lead search"

FORWARDS = (
    """DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file THEN
    RAISE NOTICE 'pg_trgm cannot be created here: lead search reads the account''s leads';
END $$""",
    """DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        CREATE INDEX IF NOT EXISTS leads_search ON leads
            USING gin ((' ' || email_key || ' ' || translate(lower(name), '-', ' ')
                || CASE WHEN strpos(email_key, '-') > 0
                   THEN ' ' || replace(email_key, '-', '') ELSE '' END
                || CASE WHEN strpos(name, '-') > 0
                   THEN ' ' || replace(lower(name), '-', '') ELSE '' END)
                gin_trgm_ops);
    END IF;
END $$""",
    "ANALYZE leads",
)
BACKWARDS = ("DROP INDEX IF EXISTS leads_search",)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS, postgres_only=True)
