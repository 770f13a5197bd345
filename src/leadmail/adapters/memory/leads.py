from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import TagChange
from leadmail.ports.errors import DuplicateLead
from leadmail.ports.leads import LeadRepository


class MemoryLeadRepository(LeadRepository):
    def __init__(self) -> None:
        self._leads: dict[tuple[str, str], Lead] = {}

    def _owner_of_email(self, lead: Lead) -> Lead | None:
        for other in self._leads.values():
            if (
                other.account_id == lead.account_id
                and other.email_key == lead.email_key
                and other.lead_id != lead.lead_id
            ):
                return other
        return None

    def all_of(self, account_id: str) -> list[Lead]:
        """Every lead of the account (for the memory import store)."""
        return [lead for lead in self._leads.values() if lead.account_id == account_id]

    def put(self, lead: Lead) -> None:
        """Store a lead as it is, new or over its older self (the import store's writes)."""
        self._leads[(lead.account_id, lead.lead_id)] = lead

    async def add(self, lead: Lead) -> Lead:
        existing = self._owner_of_email(lead)
        if existing is not None:
            raise DuplicateLead(existing.lead_id)
        self._leads[(lead.account_id, lead.lead_id)] = lead
        return lead

    async def get(self, account_id: str, lead_id: str) -> Lead | None:
        return self._leads.get((account_id, lead_id))

    async def get_many(self, account_id: str, lead_ids: Sequence[str]) -> dict[str, Lead]:
        found = (self._leads.get((account_id, lead_id)) for lead_id in lead_ids)
        return {lead.lead_id: lead for lead in found if lead is not None}

    async def replace(self, lead: Lead, expected: Lead | None = None) -> Lead | None:
        stored = self._leads.get((lead.account_id, lead.lead_id))
        if stored is None or (expected is not None and not unchanged(stored, expected)):
            return None
        existing = self._owner_of_email(lead)
        if existing is not None:
            raise DuplicateLead(existing.lead_id)
        kept = replace(lead, created_at=stored.created_at)  # only client fields change
        self._leads[(lead.account_id, lead.lead_id)] = kept
        return kept

    async def delete(self, account_id: str, lead_id: str) -> bool:
        return self._leads.pop((account_id, lead_id), None) is not None

    async def update(
        self, account_id: str, lead_id: str, change: Callable[[Lead], Lead]
    ) -> Lead | None:
        stored = self._leads.get((account_id, lead_id))
        if stored is None:
            return None
        return await self.replace(change(stored))  # no await before it: nothing between

    async def change_tags(
        self, account_id: str, lead_id: str, change: TagChange, now: datetime
    ) -> Lead | None:
        stored = self._leads.get((account_id, lead_id))
        if stored is None:
            return None
        changed = replace(stored, tags=change.apply_to(stored.tags), updated_at=now)
        self._leads[(account_id, lead_id)] = changed
        return changed

    async def count(
        self, account_id: str, segment: LeadFilter, *, at_most: int | None = None
    ) -> int:
        found = sum(
            1
            for lead in self._leads.values()
            if lead.account_id == account_id and segment.matches(lead)
        )
        if at_most is None or segment == LeadFilter():
            return found
        return min(found, at_most)

    async def field_keys(self, account_id: str, segment: LeadFilter) -> Sequence[str]:
        keys: set[str] = set()
        for lead in self._leads.values():
            if lead.account_id == account_id and segment.matches(lead):
                keys.update(lead.fields)
        return sorted(keys)

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        rows = [
            lead
            for lead in self._leads.values()
            if lead.account_id == account_id
            and query.filter.matches(lead)
            and (
                query.after is None
                or (lead.created_at, lead.lead_id) < (query.after.created_at, query.after.lead_id)
            )
        ]
        rows.sort(key=lambda lead: (lead.created_at, lead.lead_id), reverse=True)
        return rows[: query.limit + 1]


def unchanged(stored: Lead, expected: Lead) -> bool:
    """What a conditional replace compares: the lead's ``updated_at``, tags and custom
    fields (by their JSON, where true is not 1)."""
    return (
        stored.updated_at == expected.updated_at
        and stored.tags == expected.tags
        and encode_fields(stored.fields) == encode_fields(expected.fields)
    )
