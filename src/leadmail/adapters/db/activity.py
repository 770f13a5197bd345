"""An account's activity read from ``activity_counts``, which triggers keep as leads and
messages are written (migration 2026-11-28T01:28:49): each read walks the account's rows
of one kind over the days asked (at most 16 slots a day), never the leads or messages.
Suppressions are counted by their (account_id, reason) index."""

from __future__ import annotations

from datetime import date

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import plain_statement
from leadmail.ports.activity import ActivityCounts

# A lead's count is of kind 'lead' (a message's, its outcome); an account's lead total is
# the 'lead' count of day ''.
_LEADS = plain_statement(
    "SELECT day, sum(n) AS n FROM activity_counts"
    " WHERE account_id = %s AND kind = 'lead' AND day >= %s GROUP BY day"
)
_MESSAGES = plain_statement(
    "SELECT day, kind, sum(n) AS n FROM activity_counts"
    " WHERE account_id = %s AND kind <> 'lead' AND day >= %s GROUP BY day, kind"
)
_SUPPRESSIONS = plain_statement(
    "SELECT reason, count(*) AS n FROM suppressions WHERE account_id = %s GROUP BY reason"
)
LEAD_TOTAL = plain_statement(
    "SELECT coalesce(sum(n), 0) AS n FROM activity_counts"
    " WHERE account_id = %s AND kind = 'lead' AND day = ''"
)


class PiccoloActivityCounts(ActivityCounts):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def leads_per_day(self, account_id: str, since: date) -> dict[date, int]:
        rows = await self._db.fetch(_LEADS, account_id, since.isoformat())
        return {date.fromisoformat(row["day"]): int(row["n"]) for row in rows if row["n"]}

    async def messages_per_day(self, account_id: str, since: date) -> dict[tuple[date, str], int]:
        rows = await self._db.fetch(_MESSAGES, account_id, since.isoformat())
        return {
            (date.fromisoformat(row["day"]), str(row["kind"])): int(row["n"])
            for row in rows
            if row["n"]
        }

    async def suppressions_by_reason(self, account_id: str) -> dict[str, int]:
        rows = await self._db.fetch(_SUPPRESSIONS, account_id)
        return {str(row["reason"]): int(row["n"]) for row in rows}
