"""Provider events of messages in SQL. An event is applied once: its insert's conflict on
(provider, event_id) is the only check, so two deliveries of one event racing each other
store it once; the status moves in the same transaction, only forwards (the WHERE clause
lists the statuses it may leave), so two events of one message racing each other end in
the later status of the two whichever commits first."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.messages import MESSAGES
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import MessageEvents
from leadmail.domain.email import Message, MessageStatus
from leadmail.domain.message_events import MessageEvent, moves_from, stored_forms
from leadmail.ports.message_events import MessageEventRepository


def _quoted(columns: Sequence[str]) -> str:
    return ", ".join(f'"{column}"' for column in columns)


EVENTS = Mapped(MessageEvents, MessageEvent)
# Every column but the serial one, which numbers the rows in the order they were stored.
_COLUMNS = [c for c in EVENTS.columns if c != "event_row"]
_ARGS = EVENTS.getter(_COLUMNS)
_INSERT = (
    f'INSERT INTO "message_events" ({_quoted(_COLUMNS)})'
    f" VALUES ({', '.join('%s' for _ in _COLUMNS)})"
    ' ON CONFLICT ("provider", "event_id") DO NOTHING RETURNING "message_id"'
)
# The most statuses an event may move a message from (complained: from three).
_FROM = 3
_SET = 'UPDATE "messages" SET "status" = %s, "updated_at" = %s WHERE "message_id"'
_MAY_LEAVE = f' AND "status" IN ({", ".join("%s" for _ in range(_FROM))})'
# Postgres: the insert and the move in one statement (a data-modifying WITH runs to its
# end whether or not its rows are read). Arguments: the event's, then the move's.
_APPLY_AND_MOVE = EVENTS.statement(
    f'WITH "stored" AS ({_INSERT}),'
    f' "moved" AS ({_SET} IN (SELECT "message_id" FROM "stored"){_MAY_LEAVE} RETURNING 1)'
    ' SELECT count(*) AS "n" FROM "stored"'
)
_APPLY = EVENTS.statement(f'WITH "stored" AS ({_INSERT}) SELECT count(*) AS "n" FROM "stored"')
# SQLite (no data-modifying WITH): the insert, then the move, in one transaction.
_STORE = EVENTS.statement(_INSERT)
_MOVE = EVENTS.statement(f"{_SET} = %s{_MAY_LEAVE}")
_SEEN = EVENTS.statement(
    'SELECT 1 AS "n" FROM "message_events" WHERE "provider" = %s AND "event_id" = %s'
)
_LIST = EVENTS.statement(
    f'SELECT {_quoted(EVENTS.columns)} FROM "message_events"'
    ' WHERE "account_id" = %s AND "message_id" = %s ORDER BY "at", "event_row"'
)
# Through the partial index on provider_message_id (the migration's).
_FIND = MESSAGES.statement(
    f'SELECT {_quoted(MESSAGES.columns)} FROM "messages"'
    ' WHERE "provider_message_id" IN (%s, %s) AND "provider" = %s'
    ' ORDER BY "created_at" LIMIT 1'
)


def _from_args(target: MessageStatus) -> list[str]:
    """The statuses ``target`` may replace, padded to _FROM by repeating the first."""
    statuses = [str(s) for s in moves_from(target)]
    return statuses + [statuses[0]] * (_FROM - len(statuses))


class PiccoloMessageEventRepository(MessageEventRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def find_message(self, provider: str, provider_message_id: str) -> Message | None:
        with refused():
            row = await self._db.fetchrow(_FIND, *stored_forms(provider_message_id), provider)
        return None if row is None else MESSAGES.from_row(row)

    async def seen(self, provider: str, event_id: str) -> bool:
        with refused():
            return await self._db.fetchrow(_SEEN, provider, event_id) is not None

    async def apply(self, event: MessageEvent, now: datetime) -> bool:
        target = event.moves_to
        values = _ARGS(event)
        with refused():
            if self._db.kind == "postgres":
                if target is None:
                    row = await self._db.fetchrow(_APPLY, *values)
                else:
                    moving = [str(target), now, *_from_args(target)]
                    row = await self._db.fetchrow(_APPLY_AND_MOVE, *values, *moving)
                return row is not None and row["n"] == 1
            async with self._db.transaction():
                stored = await self._db.fetchrow(_STORE, *values)
                if stored is not None and target is not None:
                    await self._db.execute(
                        _MOVE, str(target), now, event.message_id, *_from_args(target)
                    )
            return stored is not None

    async def list_many(
        self, account_id: str, message_ids: Sequence[str]
    ) -> dict[str, list[MessageEvent]]:
        found: dict[str, list[MessageEvent]] = {}
        if not message_ids:
            return found
        t = self._db.tables.message_events
        with refused(), translate_errors():
            rows = (
                await t.select(*(getattr(t, name) for name in EVENTS.columns))
                .where((t.account_id == account_id) & t.message_id.is_in(sorted(set(message_ids))))
                .order_by(t.message_id, t.at, t.event_row)
            )
        for row in rows:
            found.setdefault(row["message_id"], []).append(EVENTS.from_row(row))
        return found

    async def list(self, account_id: str, message_id: str) -> list[MessageEvent]:
        with refused():
            rows = await self._db.fetch(_LIST, account_id, message_id)
        return [EVENTS.from_row(row) for row in rows]
