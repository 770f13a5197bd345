"""Postgres only: the rate limiter's counts and holds (adapters/db/rate_limits.py), so that
LEADMAIL_EMAIL_RATE and a provider's 429 hold across every process on one Postgres without
Redis. SQLite has none: there one process sends, and keeps them in its memory.

The tables are UNLOGGED (no WAL: a grant is written on every request to the provider and
read for at most a minute); a crash of Postgres empties them, which forgets at most a
minute of grants and a hold, as a restart of Redis would.

``rate_take`` is the check and the count in one step, one round trip, as the Lua script
of the `limits` package is on Redis: it takes a lock on the lane (a transaction-level
advisory lock, released when the calling statement's transaction ends, after its insert is
visible), then, on the database's clock, prunes the lane's grants older than
``kept_seconds``, sums the grants in each window (``spacing`` longer than the rate's, so a
request's jitter on its way to the provider cannot bunch it with the one whose place it
took: domain/pacing.SPACING), and either counts the new grant or says how long until
enough of them have left the fullest window. Each statement of a PL/pgSQL
function reads a fresh snapshot under READ COMMITTED (Postgres' default), so the sums see
every grant committed before the lock was granted.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from leadmail.adapters.db.raw_migration import sql_migration

ID = "2026-11-26T16:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "rate limiter counts and holds"

# The advisory lock's first key: leadmail's rate lanes (the second is the lane's hash).
_TAKE = """
CREATE OR REPLACE FUNCTION rate_take(
    taken_lane text, taken_cost integer, amounts integer[], seconds integer[],
    spacing double precision, kept_seconds integer
) RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    moment timestamptz;
    window_start timestamptz;
    used bigint;
    frees timestamptz;
    wait double precision;
BEGIN
    PERFORM pg_advisory_xact_lock(514677374, hashtext(taken_lane));
    moment := clock_timestamp();
    DELETE FROM rate_grants
        WHERE lane = taken_lane AND granted_at <= moment - make_interval(secs => kept_seconds);
    FOR i IN 1 .. coalesce(array_length(amounts, 1), 0) LOOP
        window_start := moment - make_interval(secs => seconds[i] + spacing);
        SELECT coalesce(sum(cost), 0) INTO used FROM rate_grants
            WHERE lane = taken_lane AND granted_at > window_start;
        IF used + taken_cost > amounts[i] THEN
            -- When the oldest grants that must leave for this one to fit have left.
            SELECT run.granted_at INTO frees FROM (
                SELECT granted_at, sum(cost) OVER (ORDER BY granted_at) AS freed
                FROM rate_grants
                WHERE lane = taken_lane AND granted_at > window_start
            ) AS run
            WHERE run.freed >= used + taken_cost - amounts[i]
            ORDER BY run.granted_at LIMIT 1;
            wait := greatest(wait, extract(epoch FROM frees - window_start));
        END IF;
    END LOOP;
    IF wait IS NOT NULL THEN
        RETURN greatest(wait, 0);
    END IF;
    INSERT INTO rate_grants (lane, granted_at, cost) VALUES (taken_lane, moment, taken_cost);
    RETURN NULL;
END
$$
"""

FORWARDS = (
    "CREATE UNLOGGED TABLE IF NOT EXISTS rate_grants ("
    " lane text NOT NULL, granted_at timestamptz NOT NULL,"
    " cost integer NOT NULL CHECK (cost > 0))",
    "CREATE INDEX IF NOT EXISTS rate_grants_lane ON rate_grants (lane, granted_at)",
    "CREATE UNLOGGED TABLE IF NOT EXISTS rate_holds ("
    " lane text PRIMARY KEY, held_until timestamptz NOT NULL)",
    _TAKE,
)
BACKWARDS = (
    "DROP FUNCTION IF EXISTS"
    " rate_take(text, integer, integer[], integer[], double precision, integer)",
    "DROP TABLE IF EXISTS rate_holds",
    "DROP TABLE IF EXISTS rate_grants",
)


async def forwards() -> MigrationManager:
    return sql_migration(ID, DESCRIPTION, FORWARDS, BACKWARDS, postgres_only=True)
