"""Each account's suppression list in Postgres or SQLite. The send path's lookup (``find``)
is one prepared statement over the unique (account_id, digest) index on Postgres; the rest
is rare and goes through Piccolo's query builder or plain statements."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import Suppressions
from leadmail.domain.suppressions import Added, Suppression, SuppressionReason
from leadmail.ports.suppressions import SuppressionRepository

SUPPRESSIONS = Mapped(Suppressions, Suppression)
_WRITTEN = ("account_id", "digest", "email", "reason", "created_at", "message_id", "campaign_id")
BINDING = ", ".join(f"'{r}'" for r in SuppressionReason if r.binding)
_NOT_BINDING = ", ".join(f"'{r}'" for r in SuppressionReason if not r.binding)
SUPPRESSION_COLUMNS = ", ".join(f'"{c}"' for c in SUPPRESSIONS.columns)
# One entry per address: a new one is kept unless one is there, which it replaces only when
# its reason outranks the stored one's (SuppressionReason.outranks). The row comes back
# when it was written; a stored entry that stays is read by _GET.
_ADD = SUPPRESSIONS.statement(
    f'INSERT INTO "suppressions" ({", ".join(_WRITTEN)})'
    f" VALUES ({', '.join('%s' for _ in _WRITTEN)})"
    ' ON CONFLICT ("account_id", "digest") DO UPDATE SET "email" = excluded."email",'
    ' "reason" = excluded."reason", "created_at" = excluded."created_at",'
    ' "message_id" = excluded."message_id", "campaign_id" = excluded."campaign_id"'
    f' WHERE "suppressions"."reason" IN ({_NOT_BINDING}) AND excluded."reason" IN ({BINDING})'
    f" RETURNING {SUPPRESSION_COLUMNS}",
    _WRITTEN,
)
_GET = SUPPRESSIONS.select("account_id", "digest")
_FIND_POSTGRES = SUPPRESSIONS.statement(
    f'SELECT {SUPPRESSION_COLUMNS} FROM "suppressions"'
    ' WHERE "account_id" = %s AND "digest" = ANY(%s)'
)
_REMOVE = SUPPRESSIONS.statement(
    'DELETE FROM "suppressions" WHERE "account_id" = %s AND "digest" = %s'
    ' RETURNING "suppression_id"'
)
_ERASE = SUPPRESSIONS.statement(
    'UPDATE "suppressions" SET "email" = "digest"'
    ' WHERE "account_id" = %s AND "digest" = %s AND "email" <> "digest"'
    ' RETURNING "suppression_id"'
)


class PiccoloSuppressionRepository(SuppressionRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.suppressions

    async def add(self, entry: Suppression) -> Added:
        with refused():
            while True:
                row = await self._db.fetchrow(_ADD, *_ADD.args(entry))
                if row is not None:
                    return Added(SUPPRESSIONS.from_row(row), written=True)
                # One was there, and stays.
                row = await self._db.fetchrow(_GET, entry.account_id, entry.digest)
                if row is not None:
                    return Added(SUPPRESSIONS.from_row(row), written=False)
                # A client removed it between the two statements: add again, as after it.

    async def find(self, account_id: str, digests: Sequence[str]) -> list[Suppression]:
        if not digests:
            return []
        if self._db.kind == "postgres":
            with refused():
                rows = await self._db.fetch(_FIND_POSTGRES, account_id, list(set(digests)))
        else:
            t = self._t
            with refused(), translate_errors():
                rows = await t.select().where(
                    (t.account_id == account_id) & t.digest.is_in(sorted(set(digests)))
                )
        return [SUPPRESSIONS.from_row(row) for row in rows]

    async def get(self, account_id: str, digest: str) -> Suppression | None:
        with refused():
            row = await self._db.fetchrow(_GET, account_id, digest)
        return None if row is None else SUPPRESSIONS.from_row(row)

    async def list(
        self,
        account_id: str,
        limit: int,
        after: tuple[datetime, str] | None = None,
        reason: SuppressionReason | None = None,
    ) -> list[Suppression]:
        t = self._t
        where = t.account_id == account_id
        if reason is not None:
            where &= t.reason == reason.value
        if after is not None:
            at, digest = after
            # created_at <= at as well: where the index walk starts (the rest alone is
            # a filter, over every newer entry of the account).
            where &= (t.created_at <= at) & (
                (t.created_at < at) | ((t.created_at == at) & (t.digest < digest))
            )
        with refused(), translate_errors():
            rows = (
                await t.select()
                .where(where)
                .order_by(t.created_at, t.digest, ascending=False)
                .limit(limit + 1)
            )
        return [SUPPRESSIONS.from_row(row) for row in rows]

    async def remove(self, account_id: str, digest: str) -> bool:
        with refused():
            return bool(await self._db.fetch(_REMOVE, account_id, digest))

    async def erase(self, account_id: str, digest: str) -> int:
        with refused():
            return len(await self._db.fetch(_ERASE, account_id, digest))
