from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import TagChange


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

    async def get_many(self, account_id: str, lead_ids: Sequence[str]) -> dict[str, Lead]:
        """The account's leads among ``lead_ids``, by id (a missing one is left out): one
        round trip for a campaign's batch."""
        ...

    async def replace(self, lead: Lead, expected: Lead | None = None) -> Lead | None:
        """Overwrite the client fields (tags and custom fields included) and ``updated_at``
        of an existing lead.

        Returns None if it does not exist in the account, or, when ``expected`` is given,
        if its ``updated_at``, tags or custom fields are no longer ``expected``'s (someone
        changed it since it was read: read it again). Raises DuplicateLead if the new email
        key is taken by another lead of the account. Never half-writes."""
        ...

    async def update(
        self, account_id: str, lead_id: str, change: Callable[[Lead], Lead]
    ) -> Lead | None:
        """Write ``change(lead)`` over the lead as stored (as ``replace`` does), with no
        other write to it between the read and the write: two updates at once both land,
        each applied to the other's result. Returns None if there is no such lead in the
        account; whatever ``change`` raises leaves the lead as it was."""
        ...

    async def change_tags(
        self, account_id: str, lead_id: str, change: TagChange, now: datetime
    ) -> Lead | None:
        """Add and remove tags in one atomic step (``change.apply_to`` on the tags as they
        are when written: two changes at once both land), and set ``updated_at`` to
        ``now``. Returns None if there is no such lead in the account; raises TooManyTags,
        changing nothing, when the lead would have more than MAX_TAGS."""
        ...

    async def delete(self, account_id: str, lead_id: str) -> bool:
        """Remove the lead; False if there was none."""
        ...

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        """Up to ``query.limit + 1`` leads, newest first ((created_at, lead_id) descending),
        strictly after ``query.after``, of the segment ``query.filter``."""
        ...

    async def count(
        self, account_id: str, segment: LeadFilter, *, at_most: int | None = None
    ) -> int:
        """How many leads of the account are in the segment; with ``at_most``, no more than
        that: counting stops there, so its cost is bounded by it, not by the account. Every
        lead of the account (the empty segment) is counted exactly whatever ``at_most``:
        storage keeps that count."""
        ...

    async def field_keys(self, account_id: str, segment: LeadFilter) -> Sequence[str]:
        """The custom field keys the segment's leads have between them, sorted."""
        ...
