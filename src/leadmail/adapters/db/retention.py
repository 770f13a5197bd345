"""Retention in SQL (ports/retention.py): each call one short transaction.

Every batch finds its rows through an index and removes them by key: claims by
``idempotency_keys_created``; an account's oldest messages by ``messages_log`` (account,
created_at), then each message's events by ``message_events_message``, its campaign
recipient by the partial ``campaign_recipients_message`` and its entries of the address
index by ``message_addresses_log`` (the account and each address, computed from the
message's recipients as they were written: adapters/db/messages.py); pgqueuer's log by its
``created`` index. Postgres removes a batch of messages in one statement after locking
them; SQLite in its write transaction, a statement a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Row, Statement, plain_statement
from leadmail.domain.lead_actions import ActionStatus
from leadmail.domain.lead_imports import ImportStatus
from leadmail.domain.message_listing import addresses_of
from leadmail.domain.retention import MessageBatch
from leadmail.ports.retention import RetentionStore


def _batch_delete(table: str, key: str, chosen: str) -> Statement:
    """DELETE FROM ``table`` the rows whose ``key`` the SELECT ``chosen`` names (at most its
    LIMIT). Postgres: ``= ANY(ARRAY(...))``, found by the key's index (``IN (SELECT ...)``
    is planned as a hash join over a scan of the whole table); SQLite: ``IN``, which it
    looks up by the key."""
    postgres = plain_statement(
        f'DELETE FROM "{table}" WHERE "{key}" = ANY(ARRAY({chosen})) RETURNING 1'
    )
    sqlite = plain_statement(f'DELETE FROM "{table}" WHERE "{key}" IN ({chosen}) RETURNING 1')
    return Statement(postgres.postgres, sqlite.sqlite, postgres.args, writes=True)


_CLAIMS = _batch_delete(
    "idempotency_keys",
    "claim_id",
    'SELECT "claim_id" FROM "idempotency_keys" WHERE "created_at" < %s'
    ' ORDER BY "created_at" LIMIT %s',
)
_ACCOUNTS = plain_statement(
    'SELECT "account_id" FROM "accounts" AS "a" WHERE EXISTS (SELECT 1 FROM "messages" AS "m"'
    ' WHERE "m"."account_id" = "a"."account_id" AND "m"."created_at" < %s)'
    ' ORDER BY "account_id"'
)
_OLDEST = (
    'SELECT "message_id", "campaign_id", "recipients" FROM "messages"'
    ' WHERE "account_id" = %s AND "created_at" < %s'
    ' ORDER BY "created_at", "message_id" LIMIT %s'
)
_OLDEST_LOCKED = plain_statement(_OLDEST + " FOR UPDATE")
_OLDEST_SQLITE = plain_statement(_OLDEST)
# Postgres: the batch in one statement. $1 the messages, $2 those sent for a campaign, $3
# the account, $4/$5 its address-index entries as (address, message) pairs.
_REMOVE_POSTGRES = plain_statement(
    'WITH "events" AS (DELETE FROM "message_events" WHERE "message_id" = ANY(%s::text[])'
    " RETURNING 1),"
    ' "unlinked" AS (UPDATE "campaign_recipients" SET "message_id" = NULL'
    ' WHERE "message_id" = ANY(%s::text[]) RETURNING 1),'
    ' "addressed" AS (DELETE FROM "message_addresses" AS "a"'
    ' USING unnest(%s::text[], %s::text[]) AS "x"("address", "message_id")'
    ' WHERE "a"."account_id" = %s AND "a"."address" = "x"."address"'
    ' AND "a"."message_id" = "x"."message_id" RETURNING 1),'
    ' "gone" AS (DELETE FROM "messages" WHERE "message_id" = ANY(%s::text[]) RETURNING 1)'
    ' SELECT (SELECT count(*) FROM "gone") AS "messages",'
    ' (SELECT count(*) FROM "events") AS "events",'
    ' (SELECT count(*) FROM "unlinked") AS "unlinked",'
    ' (SELECT count(*) FROM "addressed") AS "addressed"'
)
# SQLite: the same, a statement a table, inside the write transaction; ids as JSON arrays.
_IDS = 'IN (SELECT "value" FROM json_each(%s))'
_EVENTS_SQLITE = plain_statement(
    f'DELETE FROM "message_events" WHERE "message_id" {_IDS} RETURNING 1'
)
_UNLINK_SQLITE = plain_statement(
    f'UPDATE "campaign_recipients" SET "message_id" = NULL WHERE "message_id" {_IDS} RETURNING 1'
)
_ADDRESSES_SQLITE = plain_statement(
    'DELETE FROM "message_addresses" WHERE "account_id" = %s AND ("address", "message_id")'
    ' IN (SELECT "value" ->> 0, "value" ->> 1 FROM json_each(%s)) RETURNING 1'
)
_MESSAGES_SQLITE = plain_statement(f'DELETE FROM "messages" WHERE "message_id" {_IDS} RETURNING 1')
_JOB_LOG = (
    _batch_delete(
        "pgqueuer_log",
        "id",
        'SELECT "id" FROM "pgqueuer_log" WHERE "created" < %s ORDER BY "created" LIMIT %s',
    ),
    # Per-second counts, without an index on ``created``: oldest first by id.
    _batch_delete(
        "pgqueuer_statistics",
        "id",
        'SELECT "id" FROM "pgqueuer_statistics" WHERE "created" < %s ORDER BY "id" LIMIT %s',
    ),
)
_FINISHED_IMPORTS = f"('{ImportStatus.DONE}', '{ImportStatus.FAILED}')"
_IMPORT_FILES = _batch_delete(
    "lead_import_chunks",
    "id",
    'SELECT "c"."id" FROM "lead_imports" AS "i" JOIN "lead_import_chunks" AS "c"'
    ' ON "c"."import_id" = "i"."import_id"'
    f' WHERE "i"."status" IN {_FINISHED_IMPORTS} LIMIT %s',
)
_IMPORT_ERRORS = _batch_delete(
    "lead_import_errors",
    "id",
    'SELECT "e"."id" FROM "lead_imports" AS "i" JOIN "lead_import_errors" AS "e"'
    ' ON "e"."import_id" = "i"."import_id"'
    f' WHERE "i"."status" IN {_FINISHED_IMPORTS} AND "i"."finished_at" < %s LIMIT %s',
)
_FINISHED_ACTIONS = f"('{ActionStatus.DONE}', '{ActionStatus.FAILED}')"
_ACTION_MEMBERS = _batch_delete(
    "lead_action_members",
    "id",
    'SELECT "m"."id" FROM "lead_actions" AS "a" JOIN "lead_action_members" AS "m"'
    ' ON "m"."action_id" = "a"."action_id"'
    f' WHERE "a"."status" IN {_FINISHED_ACTIONS} LIMIT %s',
)


class PiccoloRetentionStore(RetentionStore):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def _removed(self, statement: Statement, *args: object) -> int:
        return len(await self._db.fetch(statement, *args))

    async def purge_claims(self, before: datetime, limit: int) -> int:
        return await self._removed(_CLAIMS, before, limit)

    async def accounts_with_messages(self, before: datetime) -> list[str]:
        return [str(row["account_id"]) for row in await self._db.fetch(_ACCOUNTS, before)]

    async def purge_messages(self, account_id: str, before: datetime, limit: int) -> MessageBatch:
        db = self._db
        async with db.transaction():
            if db.kind == "postgres":
                rows = await db.fetch(_OLDEST_LOCKED, account_id, before, limit)
                if not rows:
                    return MessageBatch()
                ids, sent_for_campaigns, addressed = _batch(rows)
                counts = await db.fetchrow(
                    _REMOVE_POSTGRES,
                    ids,
                    sent_for_campaigns,
                    [address for address, _ in addressed],
                    [message for _, message in addressed],
                    account_id,
                    ids,
                )
                assert counts is not None  # (a SELECT of counts: always one row)
                return MessageBatch(
                    messages=counts["messages"],
                    events=counts["events"],
                    unlinked=counts["unlinked"],
                )
            rows = await db.fetch(_OLDEST_SQLITE, account_id, before, limit)
            if not rows:
                return MessageBatch()
            ids, sent_for_campaigns, addressed = _batch(rows)
            events = await self._removed(_EVENTS_SQLITE, _json(ids))
            unlinked = await self._removed(_UNLINK_SQLITE, _json(sent_for_campaigns))
            await db.fetch(_ADDRESSES_SQLITE, account_id, _json(addressed))
            messages = await self._removed(_MESSAGES_SQLITE, _json(ids))
            return MessageBatch(messages=messages, events=events, unlinked=unlinked)

    async def purge_job_log(self, before: datetime, limit: int) -> int:
        if self._db.kind != "postgres":
            return 0  # SQLite runs jobs in process: they leave no log
        removed = 0
        for statement in _JOB_LOG:
            removed += await self._removed(statement, before, limit - removed)
            if removed >= limit:
                break
        return removed

    async def purge_import_files(self, limit: int) -> int:
        return await self._removed(_IMPORT_FILES, limit)

    async def purge_import_errors(self, before: datetime, limit: int) -> int:
        return await self._removed(_IMPORT_ERRORS, before, limit)

    async def purge_action_members(self, limit: int) -> int:
        return await self._removed(_ACTION_MEMBERS, limit)


def _batch(rows: Sequence[Row]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The batch's message ids, those of them sent for a campaign, and its entries of the
    address index as (address, message id)."""
    ids = [str(row["message_id"]) for row in rows]
    sent_for_campaigns = [str(row["message_id"]) for row in rows if row["campaign_id"]]
    addressed = [
        (address, str(row["message_id"]))
        for row in rows
        for address in sorted(addresses_of(msgspec.json.decode(row["recipients"], type=list[str])))
    ]
    return ids, sent_for_campaigns, addressed


def _json(values: object) -> str:
    return msgspec.json.encode(values).decode()
