"""One batch of an import on SQLite: the same effects as Postgres' one statement
(import_batches.py), in SQLite's write transaction, with the merge done by the domain
(``lead_imports.plan``), as the memory store does. New and changed leads go in multi-row
statements (an upsert by lead id for the changed ones): one statement per lead cost 0.5 ms
each (bench/README.md, "CSV import and export")."""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.leads import LEADS
from leadmail.domain.lead_imports import BatchOutcome, ImportBatch, ImportStatus, plan
from leadmail.domain.lead_timeline import LeadEventKind
from leadmail.domain.leads import CLIENT_FIELDS, Lead

_CLAIMED = LEADS.statement(
    'SELECT "runner", "rows_done", "status" FROM "lead_imports" WHERE "import_id" = %s'
)
_INSERT = LEADS.insert
_ROWS_PER_INSERT = 200  # SQLite: leads per multi-row INSERT (12 parameters each)
# A changed lead's columns: its client fields, email key and updated_at (not created_at).
_ASSIGNED = [*CLIENT_FIELDS, "email_key", "updated_at"]
_ADD_ERROR = LEADS.statement(
    'INSERT INTO "lead_import_errors" ("import_id", "row_number", "field", "message", "email")'
    " VALUES (%s, %s, %s, %s, %s)"
)
_PROGRESS = LEADS.statement(
    'UPDATE "lead_imports" SET "rows_done" = %s, "attempts" = 0, "created" = "created" + %s,'
    ' "updated" = "updated" + %s, "skipped" = "skipped" + %s, "failed" = "failed" + %s,'
    ' "updated_at" = %s WHERE "import_id" = %s'
)
_ALL = ", ".join(f'"{column}"' for column in LEADS.columns)
_KEYS_PER_QUERY = 500


async def write_sqlite(db: Database, batch: ImportBatch) -> BatchOutcome | None:
    async with db.transaction():  # its write lock, from the check to the last write
        row = await db.fetchrow(_CLAIMED, batch.import_id)
        if row is None or (row["runner"], row["rows_done"]) != (batch.runner, batch.start):
            return None
        if row["status"] != ImportStatus.RUNNING:
            return None
        keys = [imported.lead.email_key for imported in batch.leads]
        existing: dict[str, Lead] = {}
        for first in range(0, len(keys), _KEYS_PER_QUERY):
            part = keys[first : first + _KEYS_PER_QUERY]
            for found in await db.fetch(_find(len(part)), batch.account_id, *part):
                lead = LEADS.from_row(found)
                existing[lead.email_key] = lead
        planned = plan(batch, existing)
        for leads, upsert in ((planned.new, False), (planned.changed, True)):
            for first in range(0, len(leads), _ROWS_PER_INSERT):
                written = leads[first : first + _ROWS_PER_INSERT]
                values = (v for lead in written for v in _INSERT.args(lead))
                await db.execute(_inserts(len(written), upsert), *values)
                # Their events, for each lead's timeline (imported: which import).
                events = (v for lead in written for v in _event_args(batch, lead, not upsert))
                await db.execute(event_inserts(len(written)), *events)
        outcome = planned.outcome
        for error in outcome.errors:
            await db.execute(
                _ADD_ERROR, batch.import_id, error.row, error.field, error.message, error.email
            )
        await db.execute(
            _PROGRESS,
            batch.end,
            outcome.created,
            outcome.updated,
            outcome.skipped,
            outcome.failed,
            batch.now,
            batch.import_id,
        )
    return outcome


@functools.lru_cache(maxsize=8)
def _inserts(count: int, upsert: bool) -> Any:
    """An INSERT of ``count`` leads (built once per size: a batch's sizes repeat); with
    ``upsert``, of leads that exist, whose assigned columns it overwrites."""
    one = "(" + ", ".join("%s" for _ in LEADS.columns) + ")"
    columns = ", ".join(f'"{column}"' for column in LEADS.columns)
    text = f'INSERT INTO "leads" ({columns}) VALUES ' + ", ".join([one] * count)
    if upsert:
        sets = ", ".join(f'"{c}" = excluded."{c}"' for c in _ASSIGNED)
        text += f' ON CONFLICT ("lead_id") DO UPDATE SET {sets}'
    return LEADS.statement(text)


def _event_args(batch: ImportBatch, lead: Lead, created: bool) -> tuple[Any, ...]:
    detail = msgspec.json.encode({"import_id": batch.import_id, "created": created}).decode()
    return (lead.account_id, lead.lead_id, str(LeadEventKind.IMPORTED), batch.now, detail)


@functools.lru_cache(maxsize=8)
def event_inserts(count: int) -> Any:
    """An INSERT of ``count`` leads' events."""
    one = "(%s, %s, %s, %s, %s)"
    return LEADS.statement(
        'INSERT INTO "lead_events" ("account_id", "lead_id", "kind", "at", "detail") VALUES '
        + ", ".join([one] * count)
    )


@functools.lru_cache(maxsize=8)
def _find(count: int) -> Any:
    """The account's leads of ``count`` email keys."""
    marks = ", ".join("%s" for _ in range(count))
    return LEADS.statement(
        f'SELECT {_ALL} FROM "leads" WHERE "account_id" = %s AND "email_key" IN ({marks})'
    )
