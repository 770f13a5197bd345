"""Where the changes of leads that leave no other trace are kept (domain/lead_timeline.py):
a lead's updates, tag changes and imports. A lead's events go when the lead does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import LeadEvent


class LeadEventRepository(Protocol):
    """Raises StorageUnavailable when the store cannot be reached."""

    async def add(self, events: Sequence[LeadEvent]) -> None:
        """Store the events (their ``event_id`` is the store's to give, ascending), in one
        statement; an event of a lead no longer stored is dropped."""
        ...

    async def newest(
        self, account_id: str, lead_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadEvent]:
        """Up to ``limit`` of the lead's events, newest first ((at, event_id) descending),
        strictly after ``after`` (``after.lead_id`` holds the position's event id as
        ``LeadEvent.position`` writes it, or "" / "~" for before or after every event
        of that moment); none of another account's lead."""
        ...
