from __future__ import annotations

from typing import Any

from leadmail.adapters.db.engine import Database, aware, is_unique_violation, translate_errors
from leadmail.domain.leads import Lead, LeadQuery
from leadmail.ports.errors import DuplicateLead
from leadmail.ports.leads import LeadRepository

# The hot paths on Postgres, as plain SQL on Piccolo's own pool. _row() gives the
# insert's values in this column order.
_INSERT = (
    "INSERT INTO leads (lead_id, account_id, name, email, email_key, source, note,"
    " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)
_GET = (
    "SELECT lead_id, account_id, name, email, email_key, source, note, created_at,"
    " updated_at FROM leads WHERE account_id = $1 AND lead_id = $2"
)
_REPLACE = (
    "UPDATE leads SET name = $3, email = $4, email_key = $5, source = $6, note = $7,"
    " updated_at = $8 WHERE account_id = $1 AND lead_id = $2 RETURNING lead_id,"
    " account_id, name, email, email_key, source, note, created_at, updated_at"
)


class PiccoloLeadRepository(LeadRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.leads

    async def add(self, lead: Lead) -> Lead:
        t = self._t
        pool = self._db.pool
        try:
            if pool is not None:  # Postgres: no write lock to hold
                with translate_errors():
                    await pool.execute(_INSERT, *_row(lead).values())
            else:
                async with self._db.writing():
                    with translate_errors():
                        await t.insert(t(**_row(lead)))
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(lead)) from e
        return lead

    async def _id_of_email(self, lead: Lead) -> str:
        t = self._t
        with translate_errors():
            row = (
                await t.select(t.lead_id)
                .where((t.account_id == lead.account_id) & (t.email_key == lead.email_key))
                .first()
            )
        return "" if row is None else str(row["lead_id"])

    async def get(self, account_id: str, lead_id: str) -> Lead | None:
        t = self._t
        pool = self._db.pool
        if pool is not None:
            with translate_errors():
                record = await pool.fetchrow(_GET, account_id, lead_id)
            return None if record is None else _lead(dict(record))
        with translate_errors():
            row = (
                await t.select()
                .where((t.account_id == account_id) & (t.lead_id == lead_id))
                .first()
            )
        return None if row is None else _lead(row)

    async def replace(self, lead: Lead) -> Lead | None:
        t = self._t
        pool = self._db.pool
        try:
            async with self._db.writing():
                with translate_errors():
                    if pool is not None:
                        record = await pool.fetchrow(
                            _REPLACE,
                            lead.account_id,
                            lead.lead_id,
                            lead.name,
                            lead.email,
                            lead.email_key,
                            lead.source,
                            lead.note,
                            lead.updated_at,
                        )
                        return None if record is None else _lead(dict(record))
                    rows = (
                        await t.update(
                            {
                                t.name: lead.name,
                                t.email: lead.email,
                                t.email_key: lead.email_key,
                                t.source: lead.source,
                                t.note: lead.note,
                                t.updated_at: lead.updated_at,
                            }
                        )
                        .where((t.account_id == lead.account_id) & (t.lead_id == lead.lead_id))
                        .returning(*t.all_columns())
                    )
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(lead)) from e
        return _lead(rows[0]) if rows else None

    async def delete(self, account_id: str, lead_id: str) -> bool:
        t = self._t
        async with self._db.writing():
            with translate_errors():
                rows = (
                    await t.delete()
                    .where((t.account_id == account_id) & (t.lead_id == lead_id))
                    .returning(t.lead_id)
                )
        return bool(rows)

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        t = self._t
        q = t.select().where(t.account_id == account_id)
        if query.email is not None:
            q = q.where(t.email_key == query.email)
        if query.source is not None:
            q = q.where(t.source == query.source)
        if query.after is not None:
            at, last_id = query.after.created_at, query.after.lead_id
            q = q.where((t.created_at < at) | ((t.created_at == at) & (t.lead_id < last_id)))
        q = q.order_by(t.created_at, t.lead_id, ascending=False).limit(query.limit + 1)
        with translate_errors():
            rows = await q
        return [_lead(row) for row in rows]


def _row(lead: Lead) -> dict[str, Any]:
    return {
        "lead_id": lead.lead_id,
        "account_id": lead.account_id,
        "name": lead.name,
        "email": lead.email,
        "email_key": lead.email_key,
        "source": lead.source,
        "note": lead.note,
        "created_at": lead.created_at,
        "updated_at": lead.updated_at,
    }


def _lead(row: dict[str, Any]) -> Lead:
    return Lead(
        lead_id=row["lead_id"],
        account_id=row["account_id"],
        name=row["name"],
        email=row["email"],
        source=row["source"],
        note=row["note"],
        created_at=aware(row["created_at"]),
        updated_at=aware(row["updated_at"]),
    )
