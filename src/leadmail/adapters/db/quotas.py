"""Daily send quotas on Piccolo's tables: ``accounts.daily_quota``, and ``account_sends``,
one row per account and UTC day with the day's count. Taking places is one statement on
both databases (an upsert whose update holds only while the count stays within the quota),
so two processes never both take the last ones."""

from __future__ import annotations

from datetime import date

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import plain_statement
from leadmail.ports.quotas import QuotaRepository

_QUOTA = plain_statement('SELECT "daily_quota" FROM "accounts" WHERE "account_id" = %s')
_SET_QUOTA = plain_statement(
    'UPDATE "accounts" SET "daily_quota" = %s WHERE "account_id" = %s RETURNING "account_id"'
)
# (A first row of more than the quota never gets here: take refuses it first.)
_TAKE = plain_statement(
    'INSERT INTO "account_sends" ("account_id", "day", "sent") VALUES (%s, %s, %s)'
    ' ON CONFLICT ("account_id", "day") DO UPDATE'
    ' SET "sent" = "account_sends"."sent" + excluded."sent"'
    ' WHERE "account_sends"."sent" + excluded."sent" <= %s'
    ' RETURNING "sent"'
)
_GIVE_BACK = plain_statement(
    'UPDATE "account_sends" SET "sent" = CASE WHEN "sent" > %s THEN "sent" - %s ELSE 0 END'
    ' WHERE "account_id" = %s AND "day" = %s'
)
_SENT = plain_statement('SELECT "sent" FROM "account_sends" WHERE "account_id" = %s AND "day" = %s')


def _day(day: date) -> str:
    return day.isoformat()  # stored as text: the same on both databases


class PiccoloQuotaRepository(QuotaRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def quota(self, account_id: str) -> int:
        row = await self._db.fetchrow(_QUOTA, account_id)
        return 0 if row is None else int(row["daily_quota"])

    async def set_quota(self, account_id: str, quota: int) -> bool:
        return await self._db.fetchrow(_SET_QUOTA, quota, account_id) is not None

    async def take(self, account_id: str, day: date, count: int, quota: int) -> int | None:
        if count > quota:
            return None
        row = await self._db.fetchrow(_TAKE, account_id, _day(day), count, quota)
        return None if row is None else int(row["sent"])

    async def give_back(self, account_id: str, day: date, count: int) -> None:
        await self._db.execute(_GIVE_BACK, count, count, account_id, _day(day))

    async def sent(self, account_id: str, day: date) -> int:
        row = await self._db.fetchrow(_SENT, account_id, _day(day))
        return 0 if row is None else int(row["sent"])
