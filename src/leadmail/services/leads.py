from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import LeadNotFound
from leadmail.domain.lead_listing import LeadPage, LeadQuery, page_of
from leadmail.domain.lead_timeline import tags_changed, updated
from leadmail.domain.leads import Lead, LeadChanges, LeadFields, new_lead_id
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import TagChange
from leadmail.ports.lead_events import LeadEventRepository
from leadmail.ports.leads import LeadRepository


class LeadService:
    """Add, read, change and delete the leads of one account at a time.

    Every method takes the caller's ``account_id``; nothing crosses accounts. A change
    records its event for the lead's timeline once it is written (a crash between the two
    loses the event, never the change).
    """

    def __init__(
        self, repository: LeadRepository, events: LeadEventRepository, clock: Clock = utc_now
    ) -> None:
        self._repository = repository
        self._events = events
        self._clock = clock

    async def add(self, account_id: str, fields: LeadFields) -> Lead:
        """Raises DuplicateLead if the email is already in the account."""
        lead = Lead.new(new_lead_id(), account_id, fields, self._clock())
        return await self._repository.add(lead)

    async def get(self, account_id: str, lead_id: str) -> Lead:
        lead = await self._repository.get(account_id, lead_id)
        if lead is None:
            raise LeadNotFound(lead_id)
        return lead

    async def update(self, account_id: str, lead_id: str, changes: LeadChanges) -> Lead:
        """Apply a partial update, to the lead as it is when written (custom fields merged
        into its own, tags changed meanwhile kept unless replaced). Raises LeadNotFound,
        DuplicateLead when the new email belongs to another lead of the account, or
        ValidationFailed when merged fields pass their limits."""

        read: list[Lead] = []  # the lead each try changed: the last one was written

        def change(current: Lead) -> Lead:
            read.append(current)
            return changes.apply_to(current, self._clock())

        written = await self._repository.update(account_id, lead_id, change)
        if written is None:
            raise LeadNotFound(lead_id)
        event = updated(read[-1], written)
        if event is not None:
            await self._events.add([event])
        return written

    async def change_tags(self, account_id: str, lead_id: str, change: TagChange) -> Lead:
        """Raises LeadNotFound, or TooManyTags (nothing changed). An empty change changes
        nothing, ``updated_at`` included."""
        if change.empty:
            return await self.get(account_id, lead_id)
        lead = await self._repository.change_tags(account_id, lead_id, change, self._clock())
        if lead is None:
            raise LeadNotFound(lead_id)
        await self._events.add([tags_changed(lead, change)])
        return lead

    async def delete(self, account_id: str, lead_id: str) -> None:
        if not await self._repository.delete(account_id, lead_id):
            raise LeadNotFound(lead_id)

    async def list(self, account_id: str, query: LeadQuery) -> LeadPage:
        rows = await self._repository.list(account_id, query)
        return page_of(rows, query.limit)

    async def count(
        self, account_id: str, segment: LeadFilter, *, at_most: int | None = None
    ) -> int:
        """LeadRepository.count: ``at_most`` bounds a segment's count (and its cost)."""
        return await self._repository.count(account_id, segment, at_most=at_most)
