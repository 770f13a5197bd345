"""A lead's events in SQL (ports/lead_events.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import LeadEvents
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import AFTER_EVERY_ID, LeadEvent, LeadEventKind
from leadmail.ports.lead_events import LeadEventRepository

EVENTS = Mapped(LeadEvents, LeadEvent)
# Postgres: every event in one statement, numbered in their order; one of a lead deleted
# meanwhile is dropped.
_ADD_MANY = EVENTS.statement(
    'INSERT INTO "lead_events" ("account_id", "lead_id", "kind", "at", "detail")'
    ' SELECT e."a", e."l", e."k", e."t", e."d"::jsonb FROM unnest(%s::text[], %s::text[],'
    ' %s::text[], %s::timestamptz[], %s::text[]) WITH ORDINALITY AS e("a", "l", "k", "t", "d", "n")'
    ' WHERE EXISTS (SELECT 1 FROM "leads" WHERE "leads"."lead_id" = e."l") ORDER BY e."n"'
)
_ADD_ONE = EVENTS.statement(
    'INSERT INTO "lead_events" ("account_id", "lead_id", "kind", "at", "detail")'
    ' SELECT %s, %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM "leads" WHERE "lead_id" = %s)'
)
# By the index (lead_id, at DESC, event_id DESC); the account is a filter.
_NEWEST = EVENTS.statement(
    'SELECT "event_id", "account_id", "lead_id", "kind", "at", "detail" FROM "lead_events"'
    ' WHERE "lead_id" = %s AND "account_id" = %s'
    ' AND ("at" < %s OR ("at" = %s AND "event_id" < %s))'
    ' ORDER BY "at" DESC, "event_id" DESC LIMIT %s'
)
_NEWEST_FIRST_PAGE = EVENTS.statement(
    'SELECT "event_id", "account_id", "lead_id", "kind", "at", "detail" FROM "lead_events"'
    ' WHERE "lead_id" = %s AND "account_id" = %s ORDER BY "at" DESC, "event_id" DESC LIMIT %s'
)
_ABOVE_EVERY_EVENT = 2**62


def _event_of(row: Mapping[str, Any]) -> LeadEvent:
    stored = row["detail"]
    detail = msgspec.json.decode(stored) if isinstance(stored, str | bytes) else stored
    return LeadEvent(
        account_id=row["account_id"],
        lead_id=row["lead_id"],
        kind=LeadEventKind(row["kind"]),
        at=row["at"],
        detail=detail,
        event_id=int(row["event_id"]),
    )


def _bound(position: str) -> int:
    """The event id a position names: "" before every event of its moment, "~" after."""
    if position == AFTER_EVERY_ID:
        return _ABOVE_EVERY_EVENT
    return int(position) if position.isdigit() else -1


class PiccoloLeadEventRepository(LeadEventRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(self, events: Sequence[LeadEvent]) -> None:
        if not events:
            return
        details = [msgspec.json.encode(dict(e.detail)).decode() for e in events]
        if self._db.kind == "postgres":
            await self._db.execute(
                _ADD_MANY,
                [e.account_id for e in events],
                [e.lead_id for e in events],
                [str(e.kind) for e in events],
                [e.at for e in events],
                details,
            )
            return
        async with self._db.transaction():  # SQLite: one at a time, all or none
            for event, detail in zip(events, details, strict=True):
                await self._db.execute(
                    _ADD_ONE,
                    event.account_id,
                    event.lead_id,
                    str(event.kind),
                    event.at,
                    detail,
                    event.lead_id,
                )

    async def newest(
        self, account_id: str, lead_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadEvent]:
        if after is None:
            rows = await self._db.fetch(_NEWEST_FIRST_PAGE, lead_id, account_id, limit)
        else:
            at, below = after.created_at, _bound(after.lead_id)
            rows = await self._db.fetch(_NEWEST, lead_id, account_id, at, at, below, limit)
        return [_event_of(row) for row in rows]
