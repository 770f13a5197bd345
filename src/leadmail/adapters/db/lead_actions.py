"""Bulk actions in SQL: the action and its progress (lead_actions), and the leads it froze,
a batch of ids a row (lead_action_members). A batch's application to the leads is in
action_batches.py.

Postgres: the freeze is ONE statement (the action locked and checked, the segment's leads
numbered oldest first and grouped into batches, the total set). SQLite: the same in its
write transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

import msgspec

from leadmail.adapters.db import action_batches, lead_segments
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import LeadActions
from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_actions import (
    ACTION_BATCH,
    ActionBatch,
    ActionOutcome,
    ActionStatus,
    LeadAction,
)
from leadmail.domain.segments import LeadFilter
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
# SQLite: the action as the freeze finds it (checked in Python).
_CLAIMED = ACTIONS.statement(
    'SELECT "runner", "status", "total" FROM "lead_actions" WHERE "action_id" = %s'
)


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
        chunk = self._chunk_of(batch)
        if self._db.kind == "postgres":
            return await action_batches.apply_postgres(self._db, batch, chunk)
        return await action_batches.apply_sqlite(self._db, batch, chunk)

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
