from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from leadmail.adapters.db import message_listing
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.suppressions import (
    BINDING,
    SUPPRESSION_COLUMNS,
    SUPPRESSIONS,
    PiccoloSuppressionRepository,
)
from leadmail.adapters.db.tables import Messages
from leadmail.domain.email import Message
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.message_listing import MessageQuery, MessageRows, message_addresses
from leadmail.domain.suppressions import Suppression, SuppressionCheck
from leadmail.ports.messages import DUPLICATE_MESSAGE, MessageRepository

MESSAGES = Mapped(Messages, Message, stored_as={"to": "recipients"})


def _q(column: str) -> str:
    return f'"{column}"'


_INSERT = MESSAGES.insert
_MESSAGE_COLUMNS = ", ".join(f'"{c}"' for c in MESSAGES.columns)
_HELD = f'"reason" IN ({BINDING})'
# Each address a message went to (message_addresses), written with it: on Postgres in the
# message's own statement, from the array of its addresses after its columns.
_ADDRESSED = (
    '"addressed" AS (INSERT INTO "message_addresses"'
    ' ("account_id", "address", "created_at", "message_id")'
    ' SELECT "account_id", unnest(%s::text[]), "created_at", "message_id" FROM "added")'
)
_ADDED = ' RETURNING "account_id", "created_at", "message_id")'
_VALUES = ", ".join("%s" for _ in MESSAGES.columns)
_INSERT_POSTGRES = MESSAGES.statement(
    f'WITH "added" AS (INSERT INTO "messages" ({_MESSAGE_COLUMNS}) VALUES ({_VALUES})'
    f"{_ADDED}, {_ADDRESSED} SELECT 1"
)
_INSERT_ADDRESS = MESSAGES.statement(
    'INSERT INTO "message_addresses" ("account_id", "address", "created_at", "message_id")'
    " VALUES (%s, %s, %s, %s)"
)
# One message stored unless the account's list holds one of its digests, and what held it,
# in one statement: $1 account, $2 digests, $3 transactional, then the message's columns,
# then its addresses.
_ADD_UNLESS_POSTGRES = MESSAGES.statement(
    f'WITH "barred" AS (SELECT {SUPPRESSION_COLUMNS} FROM "suppressions"'
    ' WHERE "account_id" = %s AND "digest" = ANY(%s) AND (NOT %s::boolean OR ' + _HELD + ")),"
    f' "added" AS (INSERT INTO "messages" ({_MESSAGE_COLUMNS})'
    f" SELECT {_VALUES}"
    f' WHERE NOT EXISTS (SELECT 1 FROM "barred"){_ADDED}, {_ADDRESSED}'
    f' SELECT {SUPPRESSION_COLUMNS} FROM "barred"'
)

# A message is found by its primary key, and its account checked beside it: never through
# the listing indexes that lead with account_id. Postgres would take one of those while
# the table is small and unanalysed, and a prepared statement keeps that generic plan as
# the table grows (each lookup then walks the account's index: bench/README.md, "Issue
# 16"). So a read checks the account in Python, and the update's account test is an
# expression no index serves.
_GET = MESSAGES.select("message_id")
_CHANGED = ["status", "attempts", "provider_message_id", "last_error", "updated_at"]
_UPDATE = MESSAGES.statement(
    f'UPDATE "messages" SET {", ".join(f"{_q(c)} = %s" for c in _CHANGED)}'
    ' WHERE "message_id" = %s AND "account_id" || \'\' = %s',
    (*_CHANGED, "message_id", "account_id"),
)

# SQLite: the same for many messages in one statement, their values a JSON array of rows
# in the order _CHANGED, then message_id and account_id.
_FROM_ROWS = ", ".join(f'"value" ->> {n} AS {_q(c)}' for n, c in enumerate(_CHANGED))
_SET_FROM_ROWS = ", ".join(f'{_q(c)} = "v".{_q(c)}' for c in _CHANGED)
_UPDATE_MANY_SQLITE = MESSAGES.statement(
    f'WITH "v" AS (SELECT {_FROM_ROWS}, "value" ->> {len(_CHANGED)} AS "message_id",'
    f' "value" ->> {len(_CHANGED) + 1} AS "account_id" FROM json_each(%s))'
    f' UPDATE "messages" SET {_SET_FROM_ROWS} FROM "v"'
    ' WHERE "messages"."message_id" = "v"."message_id"'
    ' AND "messages"."account_id" = "v"."account_id"'
)


def _sqlite_rows(messages: Sequence[Message]) -> str:
    """The rows of _UPDATE_MANY_SQLITE, each value as Piccolo writes it to SQLite (a
    moment as ``str`` of its UTC datetime, as convert_datetime_in does)."""
    rows = [
        [str(v.astimezone(UTC)) if isinstance(v, datetime) else v for v in _UPDATE.args(m)]
        for m in messages
    ]
    return msgspec.json.encode(rows).decode()


class PiccoloMessageRepository(MessageRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.messages
        self._suppressions = PiccoloSuppressionRepository(database)

    async def add(self, messages: Sequence[Message]) -> None:
        if not messages:
            return
        db = self._db
        with refused(duplicate=DUPLICATE_MESSAGE):
            if db.kind == "postgres":
                rows = [(*_INSERT.args(m), _addresses(m)) for m in messages]
                await db.execute_many(_INSERT_POSTGRES, rows)
                return
            addressed = [
                (m.account_id, address, m.created_at, m.message_id)
                for m in messages
                for address in _addresses(m)
            ]
            async with db.transaction():  # SQLite: one connection, a statement at a time
                for message in messages:
                    await db.execute(_INSERT, *_INSERT.args(message))
                for row in addressed:
                    await db.execute(_INSERT_ADDRESS, *row)

    async def add_unless_suppressed(
        self, messages: Sequence[Message], check: SuppressionCheck
    ) -> list[Suppression]:
        if len(messages) == 1 and self._db.kind == "postgres":  # a plain send: one round trip
            with refused(duplicate=DUPLICATE_MESSAGE):
                rows = await self._db.fetch(
                    _ADD_UNLESS_POSTGRES,
                    check.account_id,
                    list(check.digests),
                    check.transactional,
                    *_INSERT.args(messages[0]),
                    _addresses(messages[0]),
                )
            return [SUPPRESSIONS.from_row(row) for row in rows]
        found = await self._suppressions.find(check.account_id, check.digests)
        barred = [e for e in found if e.holds(check.transactional)]
        if not barred:
            await self.add(messages)
        return barred

    async def update(self, messages: Sequence[Message]) -> None:
        if not messages:
            return
        with refused():
            if self._db.kind == "sqlite" and len(messages) > 1:
                # One statement for them all: SQLite's one writer is held once, not once
                # a row (a template send's 50 outcomes, recorded as its deadline comes).
                await self._db.execute(_UPDATE_MANY_SQLITE, _sqlite_rows(messages))
                return
            # In the order of the counts their outcomes add to (activity_counts: account,
            # kind, day), so two batches whose connections share a count's slot take its
            # row locks in one order: they wait for each other, never deadlock.
            ordered = sorted(messages, key=lambda m: (m.account_id, m.status.value, m.created_at))
            await self._db.execute_many(_UPDATE, [_UPDATE.args(m) for m in ordered])

    async def get(self, account_id: str, message_id: str) -> Message | None:
        with refused():
            row = await self._db.fetchrow(_GET, message_id)
        if row is None or row["account_id"] != account_id:
            return None
        return MESSAGES.from_row(row)

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[Message]:
        if not message_ids:
            return []
        t = self._t
        with refused(), translate_errors():
            rows = await t.select().where(t.message_id.is_in(sorted(set(message_ids))))
        found = {
            row["message_id"]: MESSAGES.from_row(row)
            for row in rows
            if row["account_id"] == account_id  # (by the primary key alone: see _GET)
        }
        return [found[message_id] for message_id in message_ids if message_id in found]

    async def list(self, account_id: str, query: MessageQuery, window: int) -> MessageRows:
        text, args = message_listing.page(account_id, query, MESSAGES.columns, window)
        with refused():
            rows = await self._db.fetch(MESSAGES.statement(text), *args)
        found = sorted(
            (MESSAGES.from_row(row) for row in rows if not row["edge"]),
            key=lambda m: (m.created_at, m.message_id),
            reverse=True,
        )  # (a union's order is its parts' only when it says so: sorted here, at most 101)
        edge = [row for row in rows if row["edge"]]
        if not edge or len(found) > query.limit:
            return MessageRows(found)
        last = MESSAGES.from_row(edge[0])
        return MessageRows(found, PageCursor(last.created_at, last.message_id))


def _addresses(message: Message) -> list[str]:
    return sorted(message_addresses(message))
