"""An account's activity counted in SQL: each count walks one index over the account's
last 30 days (leads by (account_id, created_at), messages by (account_id, created_at)
with their status, suppressions by (account_id, reason)), never a whole table."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Statement
from leadmail.domain.campaigns import HANDED_BACK
from leadmail.ports.activity import ActivityCounts


def _no_args(_: Any) -> tuple[Any, ...]:
    return ()


def _statement(postgres: str, sqlite: str) -> Statement:
    return Statement(postgres=postgres, sqlite=sqlite, args=_no_args, writes=False)


# The UTC day of a moment: Postgres's timestamptz, SQLite's ISO text (stored in UTC).
_LEADS = _statement(
    "SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM leads"
    " WHERE account_id = $1 AND created_at >= $2 GROUP BY 1",
    "SELECT substr(created_at, 1, 10) AS day, count(*) AS n FROM leads"
    " WHERE account_id = {} AND created_at >= {} GROUP BY 1",
)
_MESSAGES = _statement(
    "SELECT (created_at AT TIME ZONE 'UTC')::date AS day, status, count(*) AS n FROM messages"
    " WHERE account_id = $1 AND created_at >= $2"
    " AND NOT (status = 'failed' AND last_error = $3) GROUP BY 1, 2",
    "SELECT substr(created_at, 1, 10) AS day, status, count(*) AS n FROM messages"
    " WHERE account_id = {} AND created_at >= {}"
    " AND NOT (status = 'failed' AND last_error = {}) GROUP BY 1, 2",
)
_SUPPRESSIONS = _statement(
    "SELECT reason, count(*) AS n FROM suppressions WHERE account_id = $1 GROUP BY 1",
    "SELECT reason, count(*) AS n FROM suppressions WHERE account_id = {} GROUP BY 1",
)


def _date(value: object) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


class PiccoloActivityCounts(ActivityCounts):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def leads_per_day(self, account_id: str, since: datetime) -> dict[date, int]:
        rows = await self._db.fetch(_LEADS, account_id, since)
        return {_date(row["day"]): int(row["n"]) for row in rows}

    async def messages_per_day(
        self, account_id: str, since: datetime
    ) -> dict[tuple[date, str], int]:
        rows = await self._db.fetch(_MESSAGES, account_id, since, HANDED_BACK)
        return {(_date(row["day"]), str(row["status"])): int(row["n"]) for row in rows}

    async def suppressions_by_reason(self, account_id: str) -> dict[str, int]:
        rows = await self._db.fetch(_SUPPRESSIONS, account_id)
        return {str(row["reason"]): int(row["n"]) for row in rows}
