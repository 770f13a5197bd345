"""The overview's counts, kept as rows are written (issue 29: no page counts a table by
scanning it): ``activity_counts`` (generated), filled by triggers on ``leads`` and
``messages`` and backfilled from the rows already there, in this migration's transaction.

- leads: +1 on INSERT, -1 on DELETE, by the account and the UTC day it was made, and on the
  account's total (day ""). A lead's account and creation time never change.
- messages: by the account, the UTC day it was made and its outcome (its status once it
  is not pending); an UPDATE of its status moves it from the old outcome to the new. A
  pending message is no outcome yet, nor is one handed back unsent to its campaign
  (``failed`` with domain/campaigns.HANDED_BACK, written into the trigger's text from that
  constant): they are counted nowhere.
- Every path that writes those rows (a send, an import, an event, an erasure, a purge, an
  account deleted with its rows) is counted, with no code of its own. An account being
  deleted takes its rows and its counts: nothing is counted for an account gone.

Postgres, measured (bench/README.md, issue 29 session 2): leads by statement-level
triggers over transition tables, so an import's batch of 1,000 rows is one upsert a day,
not 1,000; messages by row triggers that fire only when the outcome can change (a
message is written pending, one statement each, then given its outcome; their WHEN is
checked without calling a function), and a purge's batch delete by one statement-level
trigger. Each connection writes to the ``slot`` of its backend's pid (modulo 16), so two
writers wait for one row lock only when their pids share a slot; a statement's upserts
are made in key order. SQLite: row triggers (one writer at a time, slot 0). The reads
(adapters/db/activity.py) sum the slots.
"""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import BigInt, ForeignKey, Integer, Varchar
from piccolo.columns.indexes import IndexMethod
from piccolo.table import Table

from leadmail.adapters.db.raw_migration import TablesThenSql
from leadmail.domain.campaigns import HANDED_BACK


class Accounts(Table, tablename="accounts", schema=None):
    account_id = Varchar(
        length=40,
        default="",
        null=False,
        primary_key=True,
        unique=False,
        index=False,
        index_method=IndexMethod.btree,
        choices=None,
        db_column_name=None,
        secret=False,
    )


SLOTS = 16
_HANDED_BACK = "'" + HANDED_BACK.replace("'", "''") + "'"

INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS activity_counts_key"
    " ON activity_counts (account_id, kind, day, slot)",
)

_PG_FUNCTIONS = (
    "CREATE OR REPLACE FUNCTION activity_day(moment timestamptz) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(moment AT TIME ZONE 'UTC', 'YYYY-MM-DD') $$",
    # A message's kind as counted: its status once it has an outcome; none while pending,
    # nor for one handed back unsent.
    "CREATE OR REPLACE FUNCTION activity_kind(status text, last_error text) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN status = 'pending'"
    " OR (status = 'failed' AND last_error = " + _HANDED_BACK + ") THEN NULL ELSE status END $$",
)


# Every count below is made only for an account that is still there (EXISTS): an account
# being deleted takes its leads and messages with it (ON DELETE CASCADE), and its counts; a
# count made for it would break the foreign key, and the account's deletion with it.
def _pg_upsert(changes: str) -> str:
    """Add ``changes`` (rows of account_id, kind, day, delta) to this connection's slot, in
    key order."""
    return (
        "INSERT INTO activity_counts AS c (account_id, kind, day, slot, n)"
        f" SELECT account_id, kind, day, pg_backend_pid() % {SLOTS}, sum(delta)"
        f" FROM ({changes}) AS changes WHERE kind IS NOT NULL AND EXISTS"
        " (SELECT 1 FROM accounts AS a WHERE a.account_id = changes.account_id)"
        " GROUP BY account_id, kind, day HAVING sum(delta) <> 0"
        " ORDER BY account_id, kind, day"
        " ON CONFLICT (account_id, kind, day, slot) DO UPDATE SET n = c.n + excluded.n;"
    )


def _pg_leads(rows: str, delta: int) -> str:
    return (
        f"SELECT account_id, 'lead' AS kind, activity_day(created_at) AS day, {delta} AS delta"
        f" FROM {rows} UNION ALL SELECT account_id, 'lead', '', {delta} FROM {rows}"
    )


def _pg_message(row: str, delta: int) -> str:
    """Add ``delta`` to the count of the ``row``'s outcome (a plpgsql statement, whose plan
    the session keeps)."""
    return (
        "INSERT INTO activity_counts AS c (account_id, kind, day, slot, n)"
        f" SELECT {row}.account_id, activity_kind({row}.status, {row}.last_error),"
        f" activity_day({row}.created_at), pg_backend_pid() % {SLOTS}, {delta}"
        f" WHERE activity_kind({row}.status, {row}.last_error) IS NOT NULL AND EXISTS"
        f" (SELECT 1 FROM accounts AS a WHERE a.account_id = {row}.account_id)"
        " ON CONFLICT (account_id, kind, day, slot) DO UPDATE SET n = c.n + excluded.n;"
    )


# Leads: statement-level (an import writes a batch in one statement: one upsert a day).
# Messages: row-level, fired only when the outcome can change (a message is written as
# pending, one statement a message, then given its outcome): a pending message costs
# nothing, an outcome one upsert. A purge deletes a batch in one statement:
# statement-level.
_PG_TRIGGERS = (
    "CREATE OR REPLACE FUNCTION activity_count_leads() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN IF TG_OP = 'INSERT' THEN "
    + _pg_upsert(_pg_leads("added", 1))
    + " ELSE "
    + _pg_upsert(_pg_leads("removed", -1))
    + " END IF; RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION activity_count_message() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN IF TG_OP = 'UPDATE' THEN "
    + _pg_message("OLD", -1)
    + " END IF; "
    + _pg_message("NEW", 1)
    + " RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION activity_count_messages_removed() RETURNS trigger"
    " LANGUAGE plpgsql AS $$ BEGIN "
    + _pg_upsert(
        "SELECT account_id, activity_kind(status, last_error) AS kind,"
        " activity_day(created_at) AS day, -1 AS delta FROM removed"
    )
    + " RETURN NULL; END $$",
    "CREATE TRIGGER activity_leads_added AFTER INSERT ON leads"
    " REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION activity_count_leads()",
    "CREATE TRIGGER activity_leads_removed AFTER DELETE ON leads"
    " REFERENCING OLD TABLE AS removed"
    " FOR EACH STATEMENT EXECUTE FUNCTION activity_count_leads()",
    "CREATE TRIGGER activity_messages_added AFTER INSERT ON messages FOR EACH ROW"
    " WHEN (NEW.status <> 'pending') EXECUTE FUNCTION activity_count_message()",
    "CREATE TRIGGER activity_messages_changed AFTER UPDATE OF status, last_error ON messages"
    " FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status"
    " OR OLD.last_error IS DISTINCT FROM NEW.last_error)"
    " EXECUTE FUNCTION activity_count_message()",
    "CREATE TRIGGER activity_messages_removed AFTER DELETE ON messages"
    " REFERENCING OLD TABLE AS removed"
    " FOR EACH STATEMENT EXECUTE FUNCTION activity_count_messages_removed()",
)

# The rows already there, after the triggers (whose locks hold other writers back until
# this transaction commits): nothing is counted twice or missed.
_BACKFILL = (
    "INSERT INTO activity_counts (account_id, kind, day, slot, n)"
    " SELECT account_id, 'lead', {day}, 0, count(*) FROM leads GROUP BY account_id, {day}",
    "INSERT INTO activity_counts (account_id, kind, day, slot, n)"
    " SELECT account_id, 'lead', '', 0, count(*) FROM leads GROUP BY account_id",
    "INSERT INTO activity_counts (account_id, kind, day, slot, n)"
    " SELECT account_id, status, {day}, 0, count(*) FROM messages"
    " WHERE status <> 'pending' AND NOT (status = 'failed' AND last_error = "
    + _HANDED_BACK
    + ") GROUP BY account_id, status, {day}",
)
_PG_DAY = "activity_day(created_at)"
_SQLITE_DAY = "substr(created_at, 1, 10)"


def _sqlite_add(account: str, kind: str, day: str, delta: int, when: str = "true") -> str:
    # (SQLite reads INSERT ... SELECT ... ON CONFLICT only with a WHERE.)
    kept = f"EXISTS (SELECT 1 FROM accounts AS a WHERE a.account_id = {account})"
    return (
        "INSERT INTO activity_counts (account_id, kind, day, slot, n)"
        f" SELECT {account}, {kind}, {day}, 0, {delta} WHERE {when} AND {kept}"
        " ON CONFLICT (account_id, kind, day, slot) DO UPDATE SET n = n + excluded.n;"
    )


def _counted(row: str) -> str:
    return (
        f"{row}.status <> 'pending'"
        f" AND NOT ({row}.status = 'failed' AND {row}.last_error = {_HANDED_BACK})"
    )


def _sqlite_message(row: str, delta: int) -> str:
    return _sqlite_add(
        f"{row}.account_id",
        f"{row}.status",
        f"substr({row}.created_at, 1, 10)",
        delta,
        _counted(row),
    )


_SQLITE_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS activity_leads_added AFTER INSERT ON leads BEGIN "
    + _sqlite_add("NEW.account_id", "'lead'", "substr(NEW.created_at, 1, 10)", 1)
    + _sqlite_add("NEW.account_id", "'lead'", "''", 1)
    + " END",
    "CREATE TRIGGER IF NOT EXISTS activity_leads_removed AFTER DELETE ON leads BEGIN "
    + _sqlite_add("OLD.account_id", "'lead'", "substr(OLD.created_at, 1, 10)", -1)
    + _sqlite_add("OLD.account_id", "'lead'", "''", -1)
    + " END",
    "CREATE TRIGGER IF NOT EXISTS activity_messages_added AFTER INSERT ON messages"
    " WHEN NEW.status <> 'pending' BEGIN " + _sqlite_message("NEW", 1) + " END",
    "CREATE TRIGGER IF NOT EXISTS activity_messages_changed AFTER UPDATE OF status, last_error"
    " ON messages WHEN OLD.status IS NOT NEW.status OR OLD.last_error IS NOT NEW.last_error"
    " BEGIN " + _sqlite_message("OLD", -1) + _sqlite_message("NEW", 1) + " END",
    "CREATE TRIGGER IF NOT EXISTS activity_messages_removed AFTER DELETE ON messages"
    " WHEN OLD.status <> 'pending' BEGIN " + _sqlite_message("OLD", -1) + " END",
)

BY_KIND = {
    "postgres": (
        *_PG_FUNCTIONS,
        *_PG_TRIGGERS,
        *(s.format(day=_PG_DAY) for s in _BACKFILL),
    ),
    "sqlite": (*_SQLITE_TRIGGERS, *(s.format(day=_SQLITE_DAY) for s in _BACKFILL)),
}
_TRIGGERS = (
    ("activity_leads_added", "leads"),
    ("activity_leads_removed", "leads"),
    ("activity_messages_added", "messages"),
    ("activity_messages_changed", "messages"),
    ("activity_messages_removed", "messages"),
)
BACKWARDS_BY_KIND = {
    "postgres": (
        *(f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in _TRIGGERS),
        "DROP FUNCTION IF EXISTS activity_count_leads()",
        "DROP FUNCTION IF EXISTS activity_count_message()",
        "DROP FUNCTION IF EXISTS activity_count_messages_removed()",
        "DROP FUNCTION IF EXISTS activity_kind(text, text)",
        "DROP FUNCTION IF EXISTS activity_day(timestamptz)",
    ),
    "sqlite": tuple(f"DROP TRIGGER IF EXISTS {name}" for name, _ in _TRIGGERS),
}

ID = "2026-11-28T01:28:49:099534"
VERSION = "1.38.0"
DESCRIPTION = "activity counts"


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_forwards_by_kind=BY_KIND,
        sql_backwards_by_kind=BACKWARDS_BY_KIND,
    )

    manager.add_table(
        class_name="ActivityCounts",
        tablename="activity_counts",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="ActivityCounts",
        tablename="activity_counts",
        column_name="account_id",
        db_column_name="account_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Accounts,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="ActivityCounts",
        tablename="activity_counts",
        column_name="kind",
        db_column_name="kind",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 16,
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="ActivityCounts",
        tablename="activity_counts",
        column_name="day",
        db_column_name="day",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 10,
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="ActivityCounts",
        tablename="activity_counts",
        column_name="slot",
        db_column_name="slot",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="ActivityCounts",
        tablename="activity_counts",
        column_name="n",
        db_column_name="n",
        column_class_name="BigInt",
        column_class=BigInt,
        params={
            "default": 0,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    return manager
