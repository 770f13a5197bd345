"""Listing leads: newest first, a page at a time, filtered by exact values."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import Lead

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50
MAX_CURSOR_LENGTH = 512  # ours are about 90 characters


@dataclass(frozen=True, slots=True)
class LeadQuery:
    """What a lead listing asks for: newest first, one page at a time, only the leads whose
    ``equals`` attributes have those values."""

    limit: int = DEFAULT_PAGE_SIZE
    after: PageCursor | None = None
    equals: tuple[tuple[str, str], ...] = ()  # (attribute of Lead, value)

    @classmethod
    def parse(
        cls,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        **filters: str | None,
    ) -> LeadQuery:
        """``filters`` by name (FILTERS); None is no filter."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationFailed.one("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
        equals = tuple(FILTERS[name](value) for name, value in filters.items() if value is not None)
        return cls(
            limit=limit,
            after=None if cursor is None else PageCursor.decode(cursor),
            equals=equals,
        )


@dataclass(frozen=True, slots=True)
class PageCursor:
    """Position after the last lead of a page, in (created_at, lead_id) descending order."""

    created_at: datetime
    lead_id: str

    def encode(self) -> str:
        moment = self.created_at.astimezone(UTC).isoformat()
        raw = json.dumps([moment, self.lead_id], separators=(",", ":"), ensure_ascii=False)
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> PageCursor:
        invalid = ValidationFailed.one("cursor", "is not a cursor this service issued")
        if len(token) > MAX_CURSOR_LENGTH:
            raise invalid
        try:
            padded = token + "=" * (-len(token) % 4)
            created, lead_id = json.loads(base64.urlsafe_b64decode(padded.encode()))
            moment = datetime.fromisoformat(created)
            if not isinstance(lead_id, str) or moment.tzinfo is None:
                raise ValueError(token)
            moment = moment.astimezone(UTC)  # overflows for moments no database can hold
        except (
            ValueError,
            TypeError,
            OverflowError,
            binascii.Error,
            UnicodeDecodeError,
            RecursionError,
        ) as e:
            raise invalid from e
        return cls(moment, lead_id)


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


def _email_filter(value: str) -> tuple[str, str]:
    try:
        return "email_key", email_key(normalise_email(value))
    except InvalidAddress:
        return "email_key", email_key(value.strip())  # matches nothing stored; not an error


# The exact-match filters of a listing: a value as given -> (attribute of Lead, value).
FILTERS: dict[str, Callable[[str], tuple[str, str]]] = {
    "email": _email_filter,  # the same mailbox, whatever the case
    "source": lambda value: ("source", value),
    "phone": lambda value: ("phone", value.strip()),
}
