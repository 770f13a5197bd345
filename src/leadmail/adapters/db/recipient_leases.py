"""A lease of a batch of a campaign's recipients (ports/campaigns.py, ``lease``).

Postgres: ONE statement, safe with any number of workers. A retryable batch is leased by
its head, its first recipient in lead order, locked with FOR UPDATE SKIP LOCKED: two
workers asking at once never take one batch, and only the head is locked by a leaseholder, so
the batch's other rows (updated by the one that holds the head) are never waited on in the
other order. Else pending recipients, locked with FOR UPDATE SKIP LOCKED in lead order:
two workers never take one recipient. Only while the campaign is running. The rows picked
are updated by their primary key and nothing else: they are locked, so still pending, and
a join on (campaign_id, lead_id) let the planner, misled by a fresh campaign's statistics
(none yet for its rows), walk every pending row once for each row picked.

SQLite: the same steps in its write transaction (one writer at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Mapped, Row
from leadmail.adapters.db.tables import CampaignRecipients
from leadmail.domain.campaign_recipients import (
    LeasedBatch,
    Recipient,
    new_batch_id,
    new_lease_id,
)
from leadmail.domain.campaigns import CampaignStatus, RecipientStatus
from leadmail.domain.email import new_message_id

RECIPIENTS = Mapped(CampaignRecipients, Recipient)
_S = RecipientStatus
_R = '"campaign_recipients"'
_RUNNING = (
    'SELECT 1 FROM "campaigns" WHERE "campaign_id" = $1'
    f" AND \"status\" = '{CampaignStatus.RUNNING}'"
)
_SENDING = f"\"status\" = '{_S.SENDING}'"
# $1 campaign, $2 limit, $3 batch id, $4 lease id, $5 lease until, $6 now, $7 message ids.
_LEASE_POSTGRES = RECIPIENTS.statement(f"""
WITH "running" AS ({_RUNNING}),
"head" AS (
  SELECT "h"."batch_id" FROM {_R} AS "h"
  WHERE "h"."campaign_id" = $1 AND "h".{_SENDING} AND "h"."retry"
    AND EXISTS (SELECT 1 FROM "running")
    AND NOT EXISTS (SELECT 1 FROM {_R} AS "o" WHERE "o"."campaign_id" = $1
      AND "o".{_SENDING} AND "o"."batch_id" = "h"."batch_id" AND "o"."lead_id" < "h"."lead_id")
  ORDER BY "h"."lead_id" LIMIT 1 FOR UPDATE SKIP LOCKED
),
"retried" AS (
  UPDATE {_R} SET "lease_id" = $4, "retry" = FALSE, "lease_until" = $5, "updated_at" = $6
  WHERE "campaign_id" = $1 AND "batch_id" = (SELECT "batch_id" FROM "head")
    AND {_SENDING} AND "retry"
  RETURNING *
),
"picked" AS (
  SELECT "recipient_id", "lead_id" FROM {_R} WHERE "campaign_id" = $1
    AND "status" = '{_S.PENDING}'
    AND EXISTS (SELECT 1 FROM "running") AND NOT EXISTS (SELECT 1 FROM "head")
  ORDER BY "lead_id" LIMIT $2 FOR UPDATE SKIP LOCKED
),
"numbered" AS (
  SELECT "recipient_id", row_number() OVER (ORDER BY "lead_id") AS "n" FROM "picked"
),
"fresh" AS (
  UPDATE {_R} AS "r" SET "status" = '{_S.SENDING}', "batch_id" = $3, "lease_id" = $4,
    "lease_until" = $5, "updated_at" = $6, "message_id" = ($7::text[])["numbered"."n"]
  FROM "numbered" WHERE "r"."recipient_id" = "numbered"."recipient_id"
  RETURNING "r".*
)
SELECT *, TRUE AS "was_retried" FROM "retried"
UNION ALL SELECT *, FALSE AS "was_retried" FROM "fresh"
""")


async def lease_postgres(
    db: Database, campaign_id: str, limit: int, now: datetime, lease_until: datetime
) -> LeasedBatch | None:
    lease_id = new_lease_id()
    message_ids = [new_message_id() for _ in range(limit)]
    rows = await db.fetch(
        _LEASE_POSTGRES, campaign_id, limit, new_batch_id(), lease_id, lease_until, now, message_ids
    )
    if not rows:
        return None
    return _batch(campaign_id, lease_id, lease_until, rows, bool(rows[0]["was_retried"]))


def _sqlite(text: str) -> Any:
    return RECIPIENTS.statement(text)


_IS_RUNNING = _sqlite('SELECT "status" FROM "campaigns" WHERE "campaign_id" = %s')
_HEAD = _sqlite(
    f'SELECT "batch_id" FROM {_R} WHERE "campaign_id" = %s AND {_SENDING} AND "retry"'
    ' ORDER BY "lead_id" LIMIT 1'
)
_RETRY = _sqlite(
    f'UPDATE {_R} SET "lease_id" = %s, "retry" = FALSE, "lease_until" = %s, "updated_at" = %s'
    f' WHERE "campaign_id" = %s AND "batch_id" = %s AND {_SENDING} AND "retry" RETURNING *'
)
_PENDING = _sqlite(
    f'SELECT "lead_id" FROM {_R} WHERE "campaign_id" = %s AND "status" = \'{_S.PENDING}\''
    ' ORDER BY "lead_id" LIMIT %s'
)
# The pending recipients chosen, each with its new message id: [[lead id, message id]...].
_TAKE = _sqlite(
    'WITH "m" AS (SELECT "value" ->> 0 AS "lead_id", "value" ->> 1 AS "message_id"'
    " FROM json_each(%s))"
    f' UPDATE {_R} SET "status" = \'{_S.SENDING}\', "batch_id" = %s, "lease_id" = %s,'
    ' "lease_until" = %s, "updated_at" = %s, "message_id" = "m"."message_id"'
    f' FROM "m" WHERE {_R}."campaign_id" = %s AND {_R}."lead_id" = "m"."lead_id"'
    f" AND {_R}.\"status\" = '{_S.PENDING}' RETURNING *"
)


async def lease_sqlite(
    db: Database, campaign_id: str, limit: int, now: datetime, lease_until: datetime
) -> LeasedBatch | None:
    lease_id = new_lease_id()
    async with db.transaction():  # SQLite's one writer, from the check to the last write
        campaign = await db.fetchrow(_IS_RUNNING, campaign_id)
        if campaign is None or campaign["status"] != CampaignStatus.RUNNING:
            return None
        head = await db.fetchrow(_HEAD, campaign_id)
        if head is not None:
            rows = await db.fetch(_RETRY, lease_id, lease_until, now, campaign_id, head["batch_id"])
            return _batch(campaign_id, lease_id, lease_until, rows, True)
        chosen = [row["lead_id"] for row in await db.fetch(_PENDING, campaign_id, limit)]
        if not chosen:
            return None
        pairs = msgspec.json.encode([[lead, new_message_id()] for lead in chosen]).decode()
        rows = await db.fetch(_TAKE, pairs, new_batch_id(), lease_id, lease_until, now, campaign_id)
    return _batch(campaign_id, lease_id, lease_until, rows, False)


def _batch(
    campaign_id: str,
    lease_id: str,
    lease_until: datetime,
    rows: Sequence[Row],
    retried: bool,
) -> LeasedBatch | None:
    if not rows:
        return None
    recipients = sorted((RECIPIENTS.from_row(row) for row in rows), key=lambda r: r.lead_id)
    batch_id = recipients[0].batch_id
    assert batch_id is not None
    return LeasedBatch(campaign_id, batch_id, lease_id, lease_until, recipients, retried)
