"""A lead's events in a list: one process. A deleted lead's events are dropped when read,
as the foreign key's cascade drops them in SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import LeadEvent
from leadmail.ports.lead_events import LeadEventRepository


class MemoryLeadEventRepository(LeadEventRepository):
    def __init__(self, leads: MemoryLeadRepository) -> None:
        self._leads = leads
        self._events: list[LeadEvent] = []

    async def add(self, events: Sequence[LeadEvent]) -> None:
        for event in events:
            if await self._leads.get(event.account_id, event.lead_id) is None:
                continue
            self._events.append(replace(event, event_id=len(self._events) + 1))

    async def newest(
        self, account_id: str, lead_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadEvent]:
        if await self._leads.get(account_id, lead_id) is None:
            self._events = [e for e in self._events if e.lead_id != lead_id]
            return []
        found = [
            e
            for e in self._events
            if e.lead_id == lead_id
            and e.account_id == account_id
            and (after is None or (e.at, e.position) < (after.created_at, after.lead_id))
        ]
        found.sort(key=lambda e: (e.at, e.event_id), reverse=True)
        return found[:limit]
