"""A campaign's recipients in SQL. The freeze is ONE statement on both backends (INSERT ...
SELECT over the segment's WHERE clause, lead_segments.py); a lease is one statement on
Postgres (recipient_leases.py), a few in SQLite's write transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from leadmail.adapters.db import lead_segments, recipient_leases
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.recipient_leases import RECIPIENTS
from leadmail.adapters.db.statements import Statement
from leadmail.domain.campaign_recipients import (
    STOPPED,
    LeasedBatch,
    Recipient,
    RecipientOutcome,
    lacks_variable,
    stopped_errors,
)
from leadmail.domain.campaigns import Campaign, CampaignCounts, RecipientStatus
from leadmail.ports.campaigns import RecipientRepository

_S = RecipientStatus
_ALL = ", ".join(f'"{column}"' for column in RECIPIENTS.columns)
_HELD = (
    ' WHERE "campaign_id" = %s AND "batch_id" = %s AND "lease_id" = %s'
    f" AND \"status\" = '{_S.SENDING}'"
)
_RELEASE = (
    f'UPDATE "campaign_recipients" SET "status" = \'{_S.PENDING}\', "batch_id" = NULL,'
    ' "lease_id" = NULL, "message_id" = NULL, "lease_until" = NULL, "updated_at" = %s' + _HELD
)
_RELEASE_RETRIED = 'UPDATE "campaign_recipients" SET "retry" = TRUE, "updated_at" = %s' + _HELD
_EXPIRED = (
    f' WHERE "campaign_id" = %s AND "status" = \'{_S.SENDING}\''
    ' AND NOT "retry" AND "lease_until" < %s'
)
_EXPIRE_RETRYABLE = 'UPDATE "campaign_recipients" SET "retry" = TRUE, "updated_at" = %s' + _EXPIRED
# Not retryable: a batch marked retryable before is not sent again either.
_EXPIRE_UNKNOWN = (
    f'UPDATE "campaign_recipients" SET "status" = \'{_S.UNKNOWN}\', "error" = %s,'
    ' "lease_until" = NULL, "updated_at" = %s'
    f' WHERE "campaign_id" = %s AND "status" = \'{_S.SENDING}\''
    ' AND ("retry" OR "lease_until" < %s)'
)
_CANCEL = (
    'UPDATE "campaign_recipients" SET'
    f" \"status\" = CASE WHEN \"status\" = '{_S.PENDING}' THEN '{_S.CANCELLED}'"
    f" ELSE '{_S.UNKNOWN}' END,"
    f' "error" = CASE WHEN "status" = \'{_S.PENDING}\' THEN %s ELSE %s END,'
    ' "lease_until" = NULL, "updated_at" = %s'
    f' WHERE "campaign_id" = %s AND ("status" = \'{_S.PENDING}\''
    f' OR ("status" = \'{_S.SENDING}\' AND "retry"))'
)
_FORGET = (
    'DELETE FROM "campaign_recipients" WHERE "campaign_id" = %s'
    f" AND \"status\" IN ('{_S.PENDING}', '{_S.SKIPPED}')"
)
_COUNTS = RECIPIENTS.statement(
    'SELECT "status", count(*) AS "n" FROM "campaign_recipients" WHERE "campaign_id" = %s'
    ' GROUP BY "status"'
)
_SENT_SINCE = RECIPIENTS.statement(
    'SELECT count(*) AS "n" FROM "campaign_recipients" WHERE "campaign_id" = %s'
    f' AND "status" = \'{_S.SENT}\' AND "updated_at" >= %s'
)
_SHOWN_AS = {_S.PENDING: (_S.PENDING, _S.SENDING)}  # a page of pending: sending ones too
# SQLite: the last statement's changes, on the transaction's connection.
_CHANGES = RECIPIENTS.statement('SELECT changes() AS "n"')


class PiccoloRecipientRepository(RecipientRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def freeze(self, campaign: Campaign, required: Sequence[str] = ()) -> int:
        kind = self._db.kind
        clause, where_args = lead_segments.where(kind, campaign.account_id, campaign.audience)
        # A lead lacks a key (a custom field key: [a-z][a-z0-9_]*) it has no value for.
        if kind == "postgres":
            lacks, keys = 'NOT ("fields" ? %s)', list(required)
        else:
            lacks, keys = 'json_type("fields", %s) IS NULL', [f"$.{key}" for key in required]
        status, error, args = f"'{_S.PENDING}'", "''", []
        if required:
            status = " OR ".join(lacks for _ in keys)
            status = f"CASE WHEN {status} THEN '{_S.SKIPPED}' ELSE '{_S.PENDING}' END"
            error = "CASE " + " ".join(f"WHEN {lacks} THEN %s" for _ in keys) + " ELSE '' END"
            args = [*keys, *(a for key, k in zip(required, keys, strict=True)
                             for a in (k, lacks_variable(key)))]  # fmt: skip
        text = (
            'INSERT INTO "campaign_recipients" ("campaign_id", "lead_id", "email", "status",'
            f' "error", "updated_at") SELECT %s, "lead_id", "email", {status}, {error}, %s'
            f' FROM "leads"{clause} ON CONFLICT ("campaign_id", "lead_id") DO NOTHING'
        )
        # The placeholders in order: the campaign, the status's, the error's, the moment,
        # the segment's.
        ordered = [campaign.campaign_id, *args, campaign.updated_at, *where_args]
        return await self._changed(text, ordered)

    async def lease(
        self, campaign_id: str, limit: int, *, now: datetime, lease_until: datetime
    ) -> LeasedBatch | None:
        if self._db.kind == "postgres":
            return await recipient_leases.lease_postgres(
                self._db, campaign_id, limit, now, lease_until
            )
        return await recipient_leases.lease_sqlite(self._db, campaign_id, limit, now, lease_until)

    async def record(
        self, batch: LeasedBatch, outcomes: Sequence[RecipientOutcome], now: datetime
    ) -> int:
        if not outcomes:
            return 0
        rows = [[o.lead_id, str(o.status), o.error, o.keeps_message] for o in outcomes]
        if self._db.kind == "postgres":
            text = (
                'UPDATE "campaign_recipients" AS "r" SET "status" = "o"."status",'
                ' "error" = "o"."error", "lease_until" = NULL, "updated_at" = %s,'
                ' "message_id" = CASE WHEN "o"."keeps" THEN "r"."message_id" END'
                " FROM (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bool[]))"
                ' AS "o"("lead_id", "status", "error", "keeps")'
                ' WHERE "r"."lead_id" = "o"."lead_id" AND "r"."campaign_id" = %s'
                ' AND "r"."batch_id" = %s AND "r"."lease_id" = %s'
                f' AND "r"."status" = \'{_S.SENDING}\''
            )
            columns = [list(column) for column in zip(*rows, strict=True)]
            args = [now, *columns, batch.campaign_id, batch.batch_id, batch.lease_id]
        else:
            text = (
                'WITH "o" AS (SELECT "value" ->> 0 AS "lead_id", "value" ->> 1 AS "status",'
                ' "value" ->> 2 AS "error", "value" ->> 3 AS "keeps" FROM json_each(%s))'
                ' UPDATE "campaign_recipients" SET "status" = "o"."status",'
                ' "error" = "o"."error", "lease_until" = NULL, "updated_at" = %s,'
                ' "message_id" = CASE WHEN "o"."keeps" THEN "message_id" END'
                ' FROM "o" WHERE "campaign_recipients"."lead_id" = "o"."lead_id"'
                ' AND "campaign_id" = %s AND "batch_id" = %s AND "lease_id" = %s'
                f' AND "campaign_recipients"."status" = \'{_S.SENDING}\''
            )
            encoded = msgspec.json.encode(rows).decode()
            args = [encoded, now, batch.campaign_id, batch.batch_id, batch.lease_id]
        return await self._changed(text, args)

    async def release(self, batch: LeasedBatch, now: datetime) -> int:
        text = _RELEASE_RETRIED if batch.retried else _RELEASE
        return await self._changed(text, [now, batch.campaign_id, batch.batch_id, batch.lease_id])

    async def expire(self, campaign_id: str, now: datetime, *, retryable: bool) -> int:
        if retryable:
            return await self._changed(_EXPIRE_RETRYABLE, [now, campaign_id, now])
        return await self._changed(_EXPIRE_UNKNOWN, [STOPPED, now, campaign_id, now])

    async def cancel_pending(self, campaign_id: str, now: datetime, *, failure: str = "") -> int:
        return await self._changed(_CANCEL, [*stopped_errors(failure), now, campaign_id])

    async def forget(self, campaign_id: str) -> int:
        return await self._changed(_FORGET, [campaign_id])

    async def counts(self, campaign_id: str) -> CampaignCounts:
        rows = await self._db.fetch(_COUNTS, campaign_id)
        return CampaignCounts.of({_S(row["status"]): int(row["n"]) for row in rows})

    async def counts_of(self, campaign_ids: Sequence[str]) -> dict[str, CampaignCounts]:
        if not campaign_ids:
            return {}
        text = (
            'SELECT "campaign_id", "status", count(*) AS "n" FROM "campaign_recipients"'
            f' WHERE "campaign_id" IN ({", ".join("%s" for _ in campaign_ids)})'
            ' GROUP BY "campaign_id", "status"'
        )
        by_campaign: dict[str, dict[RecipientStatus, int]] = {}
        for row in await self._db.fetch(RECIPIENTS.statement(text), *campaign_ids):
            by_campaign.setdefault(row["campaign_id"], {})[_S(row["status"])] = int(row["n"])
        return {cid: CampaignCounts.of(found) for cid, found in by_campaign.items()}

    async def page(
        self,
        campaign_id: str,
        status: RecipientStatus | None,
        limit: int,
        after: str | None = None,
    ) -> list[Recipient]:
        text = f'SELECT {_ALL} FROM "campaign_recipients" WHERE "campaign_id" = %s'
        args: list[Any] = [campaign_id]
        if status is not None:
            shown = _SHOWN_AS.get(status, (status,))
            text += f' AND "status" IN ({", ".join("%s" for _ in shown)})'
            args += [str(s) for s in shown]
        if after is not None:
            text += ' AND "lead_id" > %s'
            args.append(after)
        text += f' ORDER BY "lead_id" LIMIT {int(limit) + 1}'
        rows = await self._db.fetch(RECIPIENTS.statement(text), *args)
        return [RECIPIENTS.from_row(row) for row in rows]

    async def sent_since(self, campaign_id: str, since: datetime) -> int:
        row = await self._db.fetchrow(_SENT_SINCE, campaign_id, since)
        assert row is not None
        return int(row["n"])

    async def _changed(self, text: str, args: Sequence[Any]) -> int:
        """Run an INSERT or UPDATE; how many rows it wrote."""
        if self._db.kind == "postgres":
            counted = f'WITH "w" AS ({text} RETURNING 1) SELECT count(*) AS "n" FROM "w"'
            row = await self._db.fetchrow(_statement(counted), *args)
        else:
            async with self._db.transaction():  # changes() of this connection's statement
                await self._db.execute(_statement(text), *args)
                row = await self._db.fetchrow(_CHANGES)
        assert row is not None
        return int(row["n"])


def _statement(text: str) -> Statement:
    return RECIPIENTS.statement(text)
