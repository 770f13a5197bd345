from __future__ import annotations

from typing import Protocol

from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead


class LeadRepository(Protocol):
    """Every lead of every account. Every method is scoped by ``account_id``: a lead of
    another account behaves exactly as a missing one.

    Raises StorageUnavailable when the store cannot be reached.
    """

    async def add(self, lead: Lead) -> Lead:
        """Store a new lead. Raises DuplicateLead (with the existing id) if its email key
        is taken in the account."""
        ...

    async def get(self, account_id: str, lead_id: str) -> Lead | None: ...

    async def replace(self, lead: Lead) -> Lead | None:
        """Overwrite the client fields and ``updated_at`` of an existing lead.

        Returns None if it does not exist in the account; raises DuplicateLead if the new
        email key is taken by another lead of the account. Never half-writes."""
        ...

    async def delete(self, account_id: str, lead_id: str) -> bool:
        """Remove the lead; False if there was none."""
        ...

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        """Up to ``query.limit + 1`` leads, newest first ((created_at, lead_id) descending),
        strictly after ``query.after``, filtered by exact email key and source."""
        ...
