"""One batch of a bulk action applied to the leads, with its counts, all or nothing, once.

Postgres: ONE statement (batch_statement): the runner checked, the batch's row of
lead_action_members marked applied (two runners that meet on one batch: the second waits
for the first, then finds it applied), its leads changed or deleted, each change's
timeline event, the counts added to the action's. So batches of one action may run at
once, on several connections. The new tags are computed from each lead's tags as they are
when its row is written (a change made meanwhile by a request is kept).

SQLite: the same effects in its write transaction, the tags computed by the domain
(``lead_actions.plan``), as the memory store does.
"""

from __future__ import annotations

import functools
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.leads import LEADS
from leadmail.adapters.db.sqlite_batches import event_inserts
from leadmail.adapters.db.statements import Statement
from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_actions import (
    ActionBatch,
    ActionKind,
    ActionOutcome,
    ActionStatus,
    event_detail,
    plan,
)
from leadmail.domain.lead_timeline import LeadEventKind
from leadmail.domain.tags import MAX_TAGS

_RUNNING = f"'{ActionStatus.RUNNING}'"
# SQLite: the action and the chunk as a batch finds them (checked in Python), the chunk
# marked applied, and the counts added.
_CLAIMED = LEADS.statement('SELECT "runner", "status" FROM "lead_actions" WHERE "action_id" = %s')
_CHUNK_ROW = LEADS.statement(
    'SELECT "applied" FROM "lead_action_members" WHERE "action_id" = %s AND "chunk" = %s'
)
_MARK_APPLIED = LEADS.statement(
    'UPDATE "lead_action_members" SET "applied" = TRUE WHERE "action_id" = %s AND "chunk" = %s'
)
_BATCH_IDS = (
    'SELECT "j"."value" FROM "lead_action_members" AS "m", json_each("m"."lead_ids") AS "j"'
    ' WHERE "m"."action_id" = %s AND "m"."chunk" = %s'
)
_PROGRESS = LEADS.statement(
    'UPDATE "lead_actions" SET "done" = "done" + %s, "attempts" = 0,'
    ' "changed" = "changed" + %s, "skipped" = "skipped" + %s, "failed" = "failed" + %s,'
    ' "updated_at" = %s WHERE "action_id" = %s'
)
_LEAD_COLUMNS = ", ".join(f'"{column}"' for column in LEADS.columns)
_BATCH_LEADS = LEADS.statement(
    f'SELECT {_LEAD_COLUMNS} FROM "leads" WHERE "account_id" = %s AND "lead_id" IN ({_BATCH_IDS})'
)
_DELETE_BATCH = LEADS.statement(
    f'DELETE FROM "leads" WHERE "account_id" = %s AND "lead_id" IN ({_BATCH_IDS})'
)
_TAGS_PER_UPDATE = 200  # SQLite: leads per multi-row UPDATE (2 parameters each)
_TAGS_OF = LEADS.getter(["tags"])


async def apply_postgres(db: Database, batch: ActionBatch, chunk: int) -> ActionOutcome | None:
    action = batch.action
    change = action.change
    args: list[Any] = [
        action.action_id,
        batch.runner,
        chunk,
        batch.end - batch.start,
        action.account_id,
        batch.now,
    ]
    if action.kind is not ActionKind.DELETE:
        args += [list(change.add), list(change.remove), encode_fields(event_detail(action))]
    row = await db.fetchrow(_batch_statement(action.kind), *args)
    assert row is not None
    if not row["claimed"]:
        return None
    if not row["taken"]:
        return ActionOutcome(applied=False)
    size = batch.end - batch.start
    changed, failed = int(row["changed"]), int(row["failed"])
    return ActionOutcome(changed, max(size - changed - failed, 0), failed)


async def apply_sqlite(db: Database, batch: ActionBatch, chunk: int) -> ActionOutcome | None:
    action = batch.action
    async with db.transaction():  # its write lock, from the check to the last write
        row = await db.fetchrow(_CLAIMED, action.action_id)
        if row is None or row["runner"] != batch.runner:
            return None
        if row["status"] != ActionStatus.RUNNING:
            return None
        stored = await db.fetchrow(_CHUNK_ROW, action.action_id, chunk)
        if stored is None or stored["applied"]:
            return ActionOutcome(applied=False)
        await db.execute(_MARK_APPLIED, action.action_id, chunk)
        where = (action.action_id, chunk)
        found = await db.fetch(_BATCH_LEADS, action.account_id, *where)
        planned = plan(batch, [LEADS.from_row(lead) for lead in found])
        retagged = planned.leads
        if action.kind is ActionKind.DELETE:
            await db.execute(_DELETE_BATCH, action.account_id, *where)
            retagged = []
        for first in range(0, len(retagged), _TAGS_PER_UPDATE):
            leads = retagged[first : first + _TAGS_PER_UPDATE]
            values = [v for lead in leads for v in (lead.lead_id, *_TAGS_OF(lead))]
            await db.execute(_set_tags(len(leads)), batch.now, *values)
            detail = encode_fields(event_detail(action))
            kind = str(LeadEventKind.TAGS_CHANGED)
            events = [
                v for lead in leads for v in (action.account_id, lead.lead_id, kind, batch.now,
                                              detail)
            ]  # fmt: skip
            await db.execute(event_inserts(len(leads)), *events)
        outcome = planned.outcome
        await db.execute(
            _PROGRESS,
            batch.end - batch.start,
            outcome.changed,
            outcome.skipped,
            outcome.failed,
            batch.now,
            action.action_id,
        )
    return outcome


# Postgres: a lead's tags after the change ($7 added, $8 removed), sorted as Python sorts
# (ASCII tags: "C" is code-point order), from the row as it is when written.
_NEW_TAGS = (
    'ARRAY(SELECT DISTINCT t COLLATE "C" FROM unnest("leads"."tags" || $7::text[]) AS t'
    " WHERE t <> ALL($8::text[]) ORDER BY 1)"
)
_IN_BATCH = '"account_id" = $5 AND "lead_id" IN (SELECT "lead_id" FROM batch)'
# What a lead must be for the change to do something, cheap tests first (containment,
# overlap, lengths: the sorted new tags are counted only where they may not fit).
_NEEDS = {
    ActionKind.ADD_TAGS: 'NOT ("tags" @> $7::text[])',
    ActionKind.REMOVE_TAGS: '"tags" && $8::text[]',
}
_FITS = (
    f'NOT (cardinality("tags") + cardinality($7::text[]) > {MAX_TAGS}'
    f" AND cardinality({_NEW_TAGS}) > {MAX_TAGS})"
)


@functools.cache
def _batch_statement(kind: ActionKind) -> Statement:
    """One batch on Postgres: $1 the action, $2 its runner, $3 the chunk and $4 its size,
    $5 the account, $6 now; and for a tag change $7 and $8 the tags added and removed, $9
    the events' detail. The chunk is marked applied in the same statement (two runners
    that meet on one chunk: the second waits for the first, then finds it applied), and
    the counts are added, so that batches of one action may run at once. The batch's ids
    are materialized alone: joined to the chunk's row, each carried the whole array into
    the hash of the ids (500 MB spilled to disk for 5,000 ids)."""
    if kind is ActionKind.DELETE:
        changed = f'DELETE FROM "leads" WHERE {_IN_BATCH} RETURNING "lead_id", TRUE AS "fits"'
        over = "SELECT 0 AS n"
        events = "SELECT 1"
    else:
        # A lead it would give too many tags is left as it was (written as it was: they
        # are rare, and so one pass over the batch finds them too), and counted failed.
        # RETURNING reads the row as written: a changed lead's new tags fit again.
        changed = (
            f'UPDATE "leads" SET "tags" = CASE WHEN {_FITS} THEN {_NEW_TAGS} ELSE "tags" END,'
            f' "updated_at" = CASE WHEN {_FITS} THEN $6 ELSE "updated_at" END'
            f' WHERE {_IN_BATCH} AND {_NEEDS[kind]} RETURNING "lead_id", {_FITS} AS "fits"'
        )
        over = 'SELECT count(*) AS n FROM up WHERE NOT "fits"'
        events = (
            'INSERT INTO "lead_events" ("account_id", "lead_id", "kind", "at", "detail")'
            f" SELECT $5::text, \"lead_id\", '{LeadEventKind.TAGS_CHANGED}', $6::timestamptz,"
            ' $9::jsonb FROM up WHERE "fits"'
        )
    text = f"""
WITH claim AS (
  SELECT 1 FROM "lead_actions" WHERE "action_id" = $1 AND "runner" = $2
    AND "status" = {_RUNNING}
), chunk AS (
  UPDATE "lead_action_members" SET "applied" = TRUE
  WHERE "action_id" = $1 AND "chunk" = $3 AND NOT "applied"
    AND cardinality("lead_ids") = $4 AND EXISTS (SELECT 1 FROM claim)
  RETURNING "lead_ids"
), batch AS MATERIALIZED (
  SELECT unnest("lead_ids") AS "lead_id" FROM chunk
), up AS ({changed}
), over AS ({over}
), events AS ({events}
), progress AS (
  UPDATE "lead_actions" SET "done" = "done" + $4, "attempts" = 0,
    "changed" = "changed" + (SELECT count(*) FROM up WHERE "fits"),
    "failed" = "failed" + (SELECT n FROM over),
    "skipped" = "skipped" + greatest($4 - (SELECT count(*) FROM up), 0),
    "updated_at" = greatest("updated_at", $6)
  WHERE "action_id" = $1 AND EXISTS (SELECT 1 FROM chunk)
  RETURNING 1
)
SELECT (SELECT count(*) FROM claim) AS "claimed", (SELECT count(*) FROM progress) AS "taken",
  (SELECT count(*) FROM up WHERE "fits") AS "changed",
  (SELECT n FROM over) AS "failed"
"""
    return LEADS.statement(text)


@functools.lru_cache(maxsize=8)
def _set_tags(count: int) -> Statement:
    """SQLite: ``count`` leads' tags set (and their updated_at), from (id, tags) pairs."""
    values = ", ".join(["(%s, %s)"] * count)
    return LEADS.statement(
        'UPDATE "leads" SET "tags" = "v"."column2", "updated_at" = %s'
        f' FROM (VALUES {values}) AS "v" WHERE "leads"."lead_id" = "v"."column1"'
    )
