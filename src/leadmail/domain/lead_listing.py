"""Listing leads: newest first, a page at a time, filtered by exact values."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
# <microseconds since EPOCH>.<id>; 17 digits reach the year 5138. (Leads are created now:
# none is older than EPOCH.)
# Ids are a prefix and URL-safe base64 (leads.new_lead_id), in columns 40 wide.
_ID = "[A-Za-z0-9_-]{1,40}"
CURSOR = re.compile(f"^([0-9]{{1,17}})\\.({_ID})$")
MAX_CURSOR_LENGTH = 17 + 1 + 40


@dataclass(frozen=True, slots=True)
class LeadQuery:
    """What a lead listing asks for: newest first, one page at a time, only the leads of
    the segment ``filter`` (domain/segments.py)."""

    limit: int = DEFAULT_PAGE_SIZE
    after: PageCursor | None = None
    filter: LeadFilter = field(default_factory=LeadFilter)

    @classmethod
    def parse(
        cls,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        segment: Iterable[tuple[str, str]] = (),
        **filters: str | None,
    ) -> LeadQuery:
        """``segment``: filter parameters as sent, (name, value), for LeadFilter.parse;
        ``filters``: more of them by name (None is no filter)."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationFailed.one("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
        given = [*segment, *((k, v) for k, v in filters.items() if v is not None)]
        return cls(
            limit=limit,
            after=None if cursor is None else PageCursor.decode(cursor),
            filter=LeadFilter.parse(given),
        )


@dataclass(frozen=True, slots=True)
class PageCursor:
    """Position after the last lead of a page, in (created_at, lead_id) descending order.

    Written ``<microseconds since 1970>.<lead id>`` (CURSOR): a position, not a secret or a
    capability (a listing only ever reads the caller's own account), so any text of that
    shape is a cursor; the document states the shape, and a client passes ``next_cursor``
    back as it came."""

    created_at: datetime
    lead_id: str

    def encode(self) -> str:
        return f"{(self.created_at - EPOCH) // MICROSECOND}.{self.lead_id}"

    @classmethod
    def decode(cls, token: str) -> PageCursor:
        match = CURSOR.fullmatch(token)
        if match is None:
            raise ValidationFailed.one("cursor", "is not a cursor this service issued")
        micros, lead_id = match.groups()
        return cls(EPOCH + int(micros) * MICROSECOND, lead_id)


@dataclass(frozen=True, slots=True)
class LeadPage:
    leads: list[Lead]
    next_cursor: str | None


def page_of(rows: list[Lead], limit: int) -> LeadPage:
    """Cut ``limit + 1`` rows fetched by a repository into a page and its cursor."""
    if len(rows) <= limit:
        return LeadPage(rows, None)
    last = rows[limit - 1]
    return LeadPage(rows[:limit], PageCursor(last.created_at, last.lead_id).encode())
