from __future__ import annotations

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import is_unique_violation, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import Leads
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import CLIENT_FIELDS, Lead
from leadmail.ports.errors import DuplicateLead
from leadmail.ports.leads import LeadRepository

LEADS = Mapped(Leads, Lead)
_INSERT = LEADS.insert
_GET = LEADS.select("account_id", "lead_id")
_REPLACE = LEADS.update(
    [*CLIENT_FIELDS, "email_key", "updated_at"], ["account_id", "lead_id"], returning=True
)
_DELETE = LEADS.delete("account_id", "lead_id")
_ID_OF_EMAIL = LEADS.select("account_id", "email_key", columns=["lead_id"])


class PiccoloLeadRepository(LeadRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.leads

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

    async def replace(self, lead: Lead) -> Lead | None:
        try:
            row = await self._db.fetchrow(_REPLACE, *_REPLACE.args(lead))
        except Exception as e:
            if not is_unique_violation(e):
                raise
            raise DuplicateLead(await self._id_of_email(lead)) from e
        return None if row is None else LEADS.from_row(row)

    async def delete(self, account_id: str, lead_id: str) -> bool:
        return await self._db.fetchrow(_DELETE, account_id, lead_id) is not None

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        # Filters vary per request: Piccolo's query builder, on the table's description.
        t = self._t
        q = t.select().where(t.account_id == account_id)
        for attribute, value in query.equals:
            q = q.where(t._meta.get_column_by_name(attribute) == value)
        if query.after is not None:
            at, last_id = query.after.created_at, query.after.lead_id
            q = q.where((t.created_at < at) | ((t.created_at == at) & (t.lead_id < last_id)))
        q = q.order_by(t.created_at, t.lead_id, ascending=False).limit(query.limit + 1)
        with translate_errors():
            rows = await q
        return [LEADS.from_row(row) for row in rows]

    async def _id_of_email(self, lead: Lead) -> str:
        row = await self._db.fetchrow(_ID_OF_EMAIL, lead.account_id, lead.email_key)
        return "" if row is None else str(row["lead_id"])
