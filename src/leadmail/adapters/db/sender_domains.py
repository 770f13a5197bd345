"""Sender domains on Piccolo: rare statements (the CLI's, and one read per account every
few seconds by services/sender_rules.py), so through the query builder."""

from __future__ import annotations

from datetime import datetime

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import SenderDomains
from leadmail.domain.sender_domains import SenderDomain
from leadmail.ports.sender_domains import SenderDomainRepository

SENDER_DOMAINS = Mapped(SenderDomains, SenderDomain)
_REFUSED = "The database refused to store the sender domain"


class PiccoloSenderDomainRepository(SenderDomainRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.sender_domains

    async def add(self, account_id: str, domain: str, now: datetime) -> tuple[SenderDomain, bool]:
        t = self._t
        row = t(account_id=account_id, domain=domain, created_at=now)
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                # Insert if absent, else read the row there: two adds at once store one,
                # and each learns whether it was the one.
                inserted = await (
                    t.insert(row)
                    .on_conflict(target=(t.account_id, t.domain), action="DO NOTHING")
                    .returning(*t.all_columns())
                )
            if inserted:
                return SENDER_DOMAINS.from_row(inserted[0]), True
            found = await t.select().where((t.account_id == account_id) & (t.domain == domain))
        # Removed since the insert found it there: it was there all the same.
        held = SENDER_DOMAINS.from_row(found[0]) if found else SenderDomain(account_id, domain, now)
        return held, False

    async def remove(self, account_id: str, domain: str) -> bool:
        t = self._t
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                removed = await (
                    t.delete()
                    .where((t.account_id == account_id) & (t.domain == domain))
                    .returning(t.sender_domain_id)
                )
        return bool(removed)

    async def list(self, account_id: str) -> list[SenderDomain]:
        t = self._t
        with refused(_REFUSED), translate_errors():
            rows = await t.select().where(t.account_id == account_id)
        # Ordered here, not by the database's collation, which may ignore '-' and '.'.
        return sorted((SENDER_DOMAINS.from_row(row) for row in rows), key=lambda d: d.domain)
