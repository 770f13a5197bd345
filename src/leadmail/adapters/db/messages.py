from __future__ import annotations

from collections.abc import Sequence

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
from leadmail.domain.suppressions import Suppression, SuppressionCheck
from leadmail.ports.messages import DUPLICATE_MESSAGE, MessageRepository

MESSAGES = Mapped(Messages, Message, stored_as={"to": "recipients"})
_INSERT = MESSAGES.insert
_MESSAGE_COLUMNS = ", ".join(f'"{c}"' for c in MESSAGES.columns)
_HELD = f'"reason" IN ({BINDING})'
# One message stored unless the account's list holds one of its digests, and what held it,
# in one statement: $1 account, $2 digests, $3 transactional, then the message's columns.
_ADD_UNLESS_POSTGRES = MESSAGES.statement(
    f'WITH "barred" AS (SELECT {SUPPRESSION_COLUMNS} FROM "suppressions"'
    ' WHERE "account_id" = %s AND "digest" = ANY(%s) AND (NOT %s::boolean OR ' + _HELD + ")),"
    f' "added" AS (INSERT INTO "messages" ({_MESSAGE_COLUMNS})'
    f" SELECT {', '.join('%s' for _ in MESSAGES.columns)}"
    ' WHERE NOT EXISTS (SELECT 1 FROM "barred"))'
    f' SELECT {SUPPRESSION_COLUMNS} FROM "barred"'
)
_GET = MESSAGES.select("account_id", "message_id")
# What delivery changes; the rest of a message is written once.
_UPDATE = MESSAGES.update(
    ["status", "attempts", "provider_message_id", "last_error", "updated_at"],
    ["account_id", "message_id"],
    returning=False,
)


class PiccoloMessageRepository(MessageRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.messages
        self._suppressions = PiccoloSuppressionRepository(database)

    async def add(self, messages: Sequence[Message]) -> None:
        if messages:
            with refused(duplicate=DUPLICATE_MESSAGE):
                await self._db.execute_many(_INSERT, [_INSERT.args(m) for m in messages])

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
                )
            return [SUPPRESSIONS.from_row(row) for row in rows]
        found = await self._suppressions.find(check.account_id, check.digests)
        barred = [e for e in found if e.holds(check.transactional)]
        if not barred:
            await self.add(messages)
        return barred

    async def update(self, messages: Sequence[Message]) -> None:
        if messages:
            with refused():
                await self._db.execute_many(_UPDATE, [_UPDATE.args(m) for m in messages])

    async def get(self, account_id: str, message_id: str) -> Message | None:
        with refused():
            row = await self._db.fetchrow(_GET, account_id, message_id)
        return None if row is None else MESSAGES.from_row(row)

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[Message]:
        if not message_ids:
            return []
        t = self._t
        with refused(), translate_errors():
            rows = await t.select().where(
                (t.account_id == account_id) & t.message_id.is_in(sorted(set(message_ids)))
            )
        found = {row["message_id"]: MESSAGES.from_row(row) for row in rows}
        return [found[message_id] for message_id in message_ids if message_id in found]
