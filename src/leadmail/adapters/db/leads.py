from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from leadmail.adapters.db import lead_segments
from leadmail.adapters.db.activity import LEAD_TOTAL
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import is_unique_violation
from leadmail.adapters.db.statements import Mapped, Row
from leadmail.adapters.db.tables import Leads
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import CLIENT_FIELDS, Lead
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS, TagChange, TooManyTags
from leadmail.ports.errors import DuplicateLead
from leadmail.ports.leads import LeadRepository

LEADS = Mapped(Leads, Lead)
EVERYONE = LeadFilter()
_ALL = ", ".join(f'"{column}"' for column in LEADS.columns)
_INSERT = LEADS.insert
_GET = LEADS.select("account_id", "lead_id")
_GET_MANY = LEADS.statement(  # Postgres
    f'SELECT {_ALL} FROM "leads" WHERE "account_id" = %s AND "lead_id" = ANY(%s::text[])'
)
_ASSIGNED = [*CLIENT_FIELDS, "email_key", "updated_at"]
_REPLACE = LEADS.update(_ASSIGNED, ["account_id", "lead_id"], returning=True)
# Postgres: the same, only while the lead is as it was read (jsonb compares by value).
_REPLACE_IF = LEADS.statement(
    'UPDATE "leads" SET '
    + ", ".join(f'"{column}" = %s' for column in _ASSIGNED)
    + ' WHERE "account_id" = %s AND "lead_id" = %s'
    + ' AND "updated_at" = %s AND "tags" = %s AND "fields" = %s::jsonb'
    + f" RETURNING {_ALL}",
    [*_ASSIGNED, "account_id", "lead_id"],
)
_EXPECTED = LEADS.getter(["updated_at", "tags", "fields"])
# Postgres: the lead, locked until the transaction ends.
_LOCK = LEADS.statement(
    f'SELECT {_ALL} FROM "leads" WHERE "account_id" = %s AND "lead_id" = %s FOR UPDATE'
)
# Postgres: optimistic tries of an update (read, then write while unchanged: two round
# trips) before it locks the lead (four: BEGIN, SELECT ... FOR UPDATE, UPDATE, COMMIT).
OPTIMISTIC_TRIES = 3
_SET_TAGS = LEADS.update(["tags", "updated_at"], ["account_id", "lead_id"], returning=True)
# Postgres: add and remove in one statement, on the row as it is when written (a
# concurrent change waits for this one, then applies to its result). The tags of the
# result, sorted as Python sorts (they are ASCII: "C" is code-point order).
# (Postgres only: written with its own $n placeholders.)
_CHANGED_TAGS = (
    'SELECT DISTINCT t COLLATE "C" FROM unnest("tags" || $3::text[]) AS t'
    " WHERE t <> ALL($4::text[]) ORDER BY 1"
)
_CHANGE_TAGS = LEADS.statement(
    f'UPDATE "leads" SET "tags" = ARRAY({_CHANGED_TAGS}), "updated_at" = $5'
    ' WHERE "account_id" = $1 AND "lead_id" = $2'
    f" AND cardinality(ARRAY({_CHANGED_TAGS})) <= {MAX_TAGS} RETURNING {_ALL}"
)
_DELETE = LEADS.delete("account_id", "lead_id")
_ID_OF_EMAIL = LEADS.select("account_id", "email_key", columns=["lead_id"])


# How many of an account's newest leads a tag or search segment's page looks through
# before it asks the index instead (lead_segments.page_in_window); and at most how many a
# second, wider look goes through, when the first found some matches but not a page.
PAGE_WINDOW = 2000
WIDEST_WINDOW = 60_000


def _wider_window(found: int, limit: int, window: int) -> int | None:
    """The window that should hold a page at the density the first one showed (with a
    quarter more), if one of at most WIDEST_WINDOW leads would; None when the first found
    nothing or a page already, or the matches are too rare for a walk to pay."""
    if found == 0 or found > limit:
        return None
    wanted = (limit + 1) * window * 5 // (found * 4)
    return wanted if wanted <= WIDEST_WINDOW else None


class PiccoloLeadRepository(LeadRepository):
    def __init__(self, database: Database, *, page_window: int = PAGE_WINDOW) -> None:
        self._db = database
        self._page_window = page_window

    async def add(self, lead: Lead) -> Lead:
        try:
            await self._db.execute(_INSERT, *_INSERT.args(lead))
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(lead)) from e
        return lead

    async def get(self, account_id: str, lead_id: str) -> Lead | None:
        row = await self._db.fetchrow(_GET, account_id, lead_id)
        return None if row is None else LEADS.from_row(row)

    async def get_many(self, account_id: str, lead_ids: Sequence[str]) -> dict[str, Lead]:
        if not lead_ids:
            return {}
        wanted = sorted(set(lead_ids))
        if self._db.kind == "postgres":  # one statement whatever the count
            rows = await self._db.fetch(_GET_MANY, account_id, wanted)
        else:
            marks = ", ".join("%s" for _ in wanted)
            text = f'SELECT {_ALL} FROM "leads" WHERE "account_id" = %s AND "lead_id" IN ({marks})'
            rows = await self._db.fetch(LEADS.statement(text), account_id, *wanted)
        return {row["lead_id"]: LEADS.from_row(row) for row in rows}

    async def replace(self, lead: Lead, expected: Lead | None = None) -> Lead | None:
        try:
            if expected is None:
                row = await self._db.fetchrow(_REPLACE, *_REPLACE.args(lead))
            elif self._db.kind == "postgres":
                row = await self._db.fetchrow(
                    _REPLACE_IF, *_REPLACE_IF.args(lead), *_EXPECTED(expected)
                )
            else:  # SQLite: one writer at a time; compare and write inside its transaction
                async with self._db.transaction():
                    stored = await self.get(lead.account_id, lead.lead_id)
                    if stored is None or _EXPECTED(stored) != _EXPECTED(expected):
                        return None
                    row = await self._db.fetchrow(_REPLACE, *_REPLACE.args(lead))
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(lead)) from e
        return None if row is None else LEADS.from_row(row)

    async def update(
        self, account_id: str, lead_id: str, change: Callable[[Lead], Lead]
    ) -> Lead | None:
        if self._db.kind == "postgres":
            for _ in range(OPTIMISTIC_TRIES):
                current = await self.get(account_id, lead_id)
                if current is None:
                    return None
                updated = await self.replace(change(current), expected=current)
                if updated is not None:
                    return updated
        try:
            async with self._db.transaction():  # SQLite: its write lock; Postgres: the row's
                if self._db.kind == "postgres":
                    row = await self._db.fetchrow(_LOCK, account_id, lead_id)
                    current = None if row is None else LEADS.from_row(row)
                else:
                    current = await self.get(account_id, lead_id)
                if current is None:
                    return None
                changed = change(current)
                row = await self._db.fetchrow(_REPLACE, *_REPLACE.args(changed))
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(changed)) from e
        return None if row is None else LEADS.from_row(row)

    async def change_tags(
        self, account_id: str, lead_id: str, change: TagChange, now: datetime
    ) -> Lead | None:
        if self._db.kind == "postgres":
            row = await self._db.fetchrow(
                _CHANGE_TAGS, account_id, lead_id, list(change.add), list(change.remove), now
            )
            if row is not None:
                return LEADS.from_row(row)
            if await self.get(account_id, lead_id) is None:
                return None
            raise TooManyTags()
        async with self._db.transaction():  # SQLite: the write lock held from the read on
            stored = await self.get(account_id, lead_id)
            if stored is None:
                return None
            changed = replace(stored, tags=change.apply_to(stored.tags), updated_at=now)
            row = await self._db.fetchrow(_SET_TAGS, *_SET_TAGS.args(changed))
        return None if row is None else LEADS.from_row(row)

    async def delete(self, account_id: str, lead_id: str) -> bool:
        return await self._db.fetchrow(_DELETE, account_id, lead_id) is not None

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        if self._db.kind == "postgres" and lead_segments.narrows(query.filter):
            window = self._page_window
            rows = await self._fetch(lead_segments.page_in_window(account_id, query, _ALL, window))
            wider = _wider_window(len(rows), query.limit, window)
            if len(rows) <= query.limit and wider is not None:  # sparse, but not rare
                rows = await self._fetch(
                    lead_segments.page_in_window(account_id, query, _ALL, wider)
                )
            if len(rows) <= query.limit:  # not a full page there: ask the index
                rows = await self._fetch(lead_segments.page_of_matches(account_id, query, _ALL))
        else:
            rows = await self._fetch(lead_segments.page(self._db.kind, account_id, query, _ALL))
        return [LEADS.from_row(row) for row in rows]

    async def _fetch(self, statement: tuple[str, Sequence[Any]]) -> Sequence[Row]:
        text, args = statement
        return await self._db.fetch(LEADS.statement(text), *args)

    async def count(
        self, account_id: str, segment: LeadFilter, *, at_most: int | None = None
    ) -> int:
        if segment == EVERYONE:  # kept as leads are written (adapters/db/activity.py)
            total = await self._db.fetchrow(LEAD_TOTAL, account_id)
            assert total is not None
            return int(total["n"])
        text, args = lead_segments.count(self._db.kind, account_id, segment, at_most)
        row = await self._db.fetchrow(LEADS.statement(text), *args)
        assert row is not None
        return int(row["count"])

    async def field_keys(self, account_id: str, segment: LeadFilter) -> Sequence[str]:
        text, args = lead_segments.field_keys(self._db.kind, account_id, segment)
        rows = await self._db.fetch(LEADS.statement(text), *args)
        return sorted(str(row["key"]) for row in rows)  # code-point order, as Python sorts

    async def _id_of_email(self, lead: Lead) -> str:
        row = await self._db.fetchrow(_ID_OF_EMAIL, lead.account_id, lead.email_key)
        return "" if row is None else str(row["lead_id"])
