"""Everything an account holds about one person, found and erased in one place (GDPR
articles 15 and 17): the one port that knows every record naming an address. A store
that adds such a record (a table, a column) answers for it here too."""

from __future__ import annotations

from typing import Protocol

from leadmail.domain.privacy import DataSubject, Erased, PersonalData


class PersonalDataRepository(Protocol):
    async def export(self, account_id: str, person: DataSubject) -> PersonalData:
        """Every record of ``account_id`` naming the person's address: the lead, the
        messages to it with their events, its campaign recipients, the import error rows
        with it as their email cell, and the suppression entry under its digest."""
        ...

    async def erase(self, account_id: str, person: DataSubject) -> Erased:
        """All of it or none of it: the lead deleted; in messages, their events, campaign
        recipients and import error rows the address (and its display name) replaced by
        the digest and subjects cleared (domain/privacy.erased_*); the suppression entry
        kept as the digest. Counts what changed: 0s when nothing names the address."""
        ...
