"""Bulk actions in SQL: the action and its progress (lead_actions), the leads it froze by
position (lead_action_members), and a batch applied to the leads.

Postgres: the freeze is ONE statement (the action locked and checked, the segment's leads
numbered oldest first and inserted, the total set), and so is each batch (the action
locked and checked at its position, the batch's leads changed or deleted, each change's
timeline event, the counts): a batch lands whole or not at all, and a runner that lost
the action writes nothing. The new tags are computed from each lead's tags as they are
when its row is written (a change made meanwhile by a request is kept).

SQLite: the same effects in its write transaction, the tags computed by the domain
(``lead_actions.plan``), as the memory store does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

import msgspec

from leadmail.adapters.db import lead_segments
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.leads import LEADS
from leadmail.adapters.db.sqlite_batches import event_inserts
from leadmail.adapters.db.statements import Mapped, Statement
from leadmail.adapters.db.tables import LeadActions
from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_actions import (
    ACTION_BATCH,
    ActionBatch,
    ActionKind,
    ActionOutcome,
    ActionStatus,
    LeadAction,
    event_detail,
    plan,
)
from leadmail.domain.lead_timeline import LeadEventKind
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS
from leadmail.ports.lead_actions import LeadActionRepository

# The segment is stored as the JSON LeadFilter.to_json writes (read back by _action_of).
ACTIONS = Mapped(
    LeadActions, LeadAction, computed={"segment": lambda a: encode_fields(a.segment.to_json())}
)
_ALL = ", ".join(f'"{column}"' for column in ACTIONS.columns)
_WAITING = f"('{ActionStatus.QUEUED}', '{ActionStatus.RUNNING}')"
_RUNNING = f"'{ActionStatus.RUNNING}'"

_INSERT = ACTIONS.insert
_GET = ACTIONS.select("account_id", "action_id")
_FIND = ACTIONS.select("action_id")
_CLAIM = ACTIONS.statement(
    f'UPDATE "lead_actions" SET "status" = {_RUNNING}, "runner" = %s,'
    ' "attempts" = "attempts" + CASE WHEN "runner" = %s THEN 0 ELSE 1 END,'
    ' "started_at" = COALESCE("started_at", %s), "updated_at" = %s'
    f' WHERE "action_id" = %s AND "status" IN {_WAITING} RETURNING {_ALL}'
)
_FINISH = ACTIONS.statement(
    'UPDATE "lead_actions" SET "status" = %s, "error" = %s, "finished_at" = %s,'
    ' "updated_at" = %s WHERE "action_id" = %s AND ("runner" = %s OR %s = \'\')'
    f' AND "status" IN {_WAITING} RETURNING {_ALL}'
)
_FORGET_MEMBERS = ACTIONS.statement('DELETE FROM "lead_action_members" WHERE "action_id" = %s')
_UNFINISHED = ACTIONS.statement(
    f'SELECT {_ALL} FROM "lead_actions" WHERE "status" IN {_WAITING}'
    ' ORDER BY "created_at", "action_id"'
)
# Which leads of the account the action froze: in its segment now, created by then,
# oldest first (their position), a batch of ids a row (chunk k: positions k * size + 1 on).
_NUMBERED = (
    'SELECT "lead_id", row_number() OVER (ORDER BY "created_at", "lead_id") AS "n"'
    ' FROM "leads"{where} AND "created_at" <= %s'
)
_FREEZE = (  # Postgres: the chunks, and the total, in one statement
    'WITH claim AS (SELECT 1 FROM "lead_actions" WHERE "action_id" = %s AND "runner" = %s'
    f' AND "status" = {_RUNNING} AND "total" IS NULL FOR UPDATE),'
    ' frozen AS (INSERT INTO "lead_action_members" ("action_id", "chunk", "lead_ids")'
    ' SELECT %s, ("n" - 1) / %s::int, array_agg("lead_id" ORDER BY "n")'
    ' FROM ({numbered} AND EXISTS (SELECT 1 FROM claim)) AS "f"'
    ' GROUP BY 2 RETURNING cardinality("lead_ids") AS "size")'
    ' UPDATE "lead_actions" SET "total" = (SELECT coalesce(sum("size"), 0) FROM frozen),'
    ' "updated_at" = %s WHERE "action_id" = %s AND EXISTS (SELECT 1 FROM claim)'
)
_ADD_CHUNK = ACTIONS.statement(  # SQLite
    'INSERT INTO "lead_action_members" ("action_id", "chunk", "lead_ids") VALUES (%s, %s, %s)'
)
_SET_TOTAL = ACTIONS.statement(
    'UPDATE "lead_actions" SET "total" = %s, "updated_at" = %s WHERE "action_id" = %s'
)
_REMAINING = ACTIONS.statement(
    'SELECT "chunk" FROM "lead_action_members" WHERE "action_id" = %s AND NOT "applied"'
    ' ORDER BY "chunk"'
)
# SQLite: the action and the chunk as a batch finds them (checked in Python), the chunk
# marked applied, and the counts added.
_CLAIMED = ACTIONS.statement(
    'SELECT "runner", "status", "total" FROM "lead_actions" WHERE "action_id" = %s'
)
_CHUNK_ROW = ACTIONS.statement(
    'SELECT "applied" FROM "lead_action_members" WHERE "action_id" = %s AND "chunk" = %s'
)
_MARK_APPLIED = ACTIONS.statement(
    'UPDATE "lead_action_members" SET "applied" = TRUE WHERE "action_id" = %s AND "chunk" = %s'
)
_BATCH_IDS = (
    'SELECT "j"."value" FROM "lead_action_members" AS "m", json_each("m"."lead_ids") AS "j"'
    ' WHERE "m"."action_id" = %s AND "m"."chunk" = %s'
)
_PROGRESS = ACTIONS.statement(
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


def _action_of(row: Mapping[str, Any]) -> LeadAction:
    stored = row["segment"]
    segment = msgspec.json.decode(stored) if isinstance(stored, str | bytes) else stored
    return replace(ACTIONS.from_row(row), segment=LeadFilter.from_json(segment))


class PiccoloLeadActionRepository(LeadActionRepository):
    def __init__(self, database: Database, *, batch: int = ACTION_BATCH) -> None:
        """``batch``: leads per frozen batch (a row of lead_action_members)."""
        self._db = database
        self._batch = batch

    async def create(self, action: LeadAction) -> None:
        await self._db.execute(_INSERT, *_INSERT.args(action))

    async def get(self, account_id: str, action_id: str) -> LeadAction | None:
        return self._one(await self._db.fetchrow(_GET, account_id, action_id))

    async def claim(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        return self._one(await self._db.fetchrow(_CLAIM, runner, runner, now, now, action_id))

    async def freeze(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        found = self._one(await self._db.fetchrow(_FIND, action_id))
        if found is None or found.runner != runner or found.status is not ActionStatus.RUNNING:
            return None
        if found.total is not None:
            return found
        where, where_args = lead_segments.where(self._db.kind, found.account_id, found.segment)
        numbered = _NUMBERED.format(where=where)
        if self._db.kind == "postgres":
            await self._db.execute(
                ACTIONS.statement(_FREEZE.format(numbered=numbered)),
                action_id,
                runner,
                action_id,
                self._batch,
                *where_args,
                found.created_at,
                now,
                action_id,
            )
        else:
            ordered = ACTIONS.statement(f'SELECT "lead_id" FROM ({numbered}) ORDER BY "n"')
            async with self._db.transaction():  # its write lock, from the check on
                row = await self._db.fetchrow(_CLAIMED, action_id)
                if row is None or row["runner"] != runner or row["total"] is not None:
                    return await self._frozen(action_id, runner)
                ids = [r["lead_id"] for r in await self._db.fetch(ordered, *where_args,
                                                                   found.created_at)]  # fmt: skip
                for first in range(0, len(ids), self._batch):
                    chunk = ids[first : first + self._batch]
                    await self._db.execute(_ADD_CHUNK, action_id, first // self._batch, chunk)
                await self._db.execute(_SET_TOTAL, len(ids), now, action_id)
        return await self._frozen(action_id, runner)

    async def _frozen(self, action_id: str, runner: str) -> LeadAction | None:
        found = self._one(await self._db.fetchrow(_FIND, action_id))
        if found is None or found.runner != runner or found.status is not ActionStatus.RUNNING:
            return None
        return found

    async def remaining(self, action_id: str) -> list[tuple[int, int]]:
        found = self._one(await self._db.fetchrow(_FIND, action_id))
        total = found.total if found is not None and found.total is not None else 0
        rows = await self._db.fetch(_REMAINING, action_id)
        size = self._batch
        return [(row["chunk"] * size, min((row["chunk"] + 1) * size, total)) for row in rows]

    def _chunk_of(self, batch: ActionBatch) -> int:
        chunk, offset = divmod(batch.start, self._batch)
        if offset or batch.end - batch.start > self._batch:
            raise ValueError(f"not a frozen batch: {batch.start}..{batch.end}")
        return chunk

    async def apply(self, batch: ActionBatch) -> ActionOutcome | None:
        if self._db.kind == "postgres":
            return await self._apply_postgres(batch)
        return await self._apply_sqlite(batch)

    async def _apply_postgres(self, batch: ActionBatch) -> ActionOutcome | None:
        action = batch.action
        change = action.change
        args: list[Any] = [
            action.action_id,
            batch.runner,
            self._chunk_of(batch),
            batch.end - batch.start,
            action.account_id,
            batch.now,
        ]
        if action.kind is not ActionKind.DELETE:
            args += [list(change.add), list(change.remove), encode_fields(event_detail(action))]
        row = await self._db.fetchrow(_batch_statement(action.kind), *args)
        assert row is not None
        if not row["claimed"]:
            return None
        if not row["taken"]:
            return ActionOutcome(applied=False)
        size = batch.end - batch.start
        changed, failed = int(row["changed"]), int(row["failed"])
        return ActionOutcome(changed, max(size - changed - failed, 0), failed)

    async def _apply_sqlite(self, batch: ActionBatch) -> ActionOutcome | None:
        action = batch.action
        chunk = self._chunk_of(batch)
        async with self._db.transaction():  # its write lock, from the check to the last write
            row = await self._db.fetchrow(_CLAIMED, action.action_id)
            if row is None or row["runner"] != batch.runner:
                return None
            if row["status"] != ActionStatus.RUNNING:
                return None
            stored = await self._db.fetchrow(_CHUNK_ROW, action.action_id, chunk)
            if stored is None or stored["applied"]:
                return ActionOutcome(applied=False)
            await self._db.execute(_MARK_APPLIED, action.action_id, chunk)
            where = (action.action_id, chunk)
            found = await self._db.fetch(_BATCH_LEADS, action.account_id, *where)
            planned = plan(batch, [LEADS.from_row(lead) for lead in found])
            retagged = planned.leads
            if action.kind is ActionKind.DELETE:
                await self._db.execute(_DELETE_BATCH, action.account_id, *where)
                retagged = []
            for first in range(0, len(retagged), _TAGS_PER_UPDATE):
                leads = retagged[first : first + _TAGS_PER_UPDATE]
                values = [v for lead in leads for v in (lead.lead_id, *_TAGS_OF(lead))]
                await self._db.execute(_set_tags(len(leads)), batch.now, *values)
                detail = encode_fields(event_detail(action))
                kind = str(LeadEventKind.TAGS_CHANGED)
                events = [
                    v for lead in leads for v in (action.account_id, lead.lead_id, kind, batch.now,
                                                  detail)
                ]  # fmt: skip
                await self._db.execute(event_inserts(len(leads)), *events)
            outcome = planned.outcome
            await self._db.execute(
                _PROGRESS,
                batch.end - batch.start,
                outcome.changed,
                outcome.skipped,
                outcome.failed,
                batch.now,
                action.action_id,
            )
        return outcome

    async def finish(
        self, action_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadAction | None:
        status = ActionStatus.DONE if error is None else ActionStatus.FAILED
        async with self._db.transaction():
            row = await self._db.fetchrow(
                _FINISH, str(status), error or "", now, now, action_id, runner, runner
            )
            finished = self._one(row)
            if finished is not None:  # its frozen leads are of no more use
                await self._db.execute(_FORGET_MEMBERS, action_id)
        return finished

    async def unfinished(self) -> list[LeadAction]:
        return [_action_of(row) for row in await self._db.fetch(_UNFINISHED)]

    @staticmethod
    def _one(row: Mapping[str, Any] | None) -> LeadAction | None:
        return None if row is None else _action_of(row)


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
