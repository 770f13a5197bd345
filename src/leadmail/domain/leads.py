"""Leads: a course business's prospective students, and the rules every lead obeys."""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import FieldError, ValidationFailed

MAX_NAME = 200
MAX_SOURCE = 100
MAX_NOTE = 10_000
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50
LEAD_ID_PREFIX = "ld_"
MAX_CURSOR_LENGTH = 512  # ours are about 90 characters

_Rule = Callable[[str], str]

# Fields the service owns: a client that sends them is told so, by name.
READ_ONLY_FIELDS = frozenset({"lead_id", "created_at", "updated_at", "account", "account_id"})


def new_lead_id() -> str:
    """An opaque, unguessable id: 128 random bits, URL-safe."""
    return LEAD_ID_PREFIX + secrets.token_urlsafe(16)


# Lead and LeadFields are made once or more per request, and a frozen dataclass pays an
# object.__setattr__ per field to be built (17k instructions for a Lead against 7k): they
# are slotted, not frozen. Nothing mutates them; changes make new ones (dataclasses.replace).
@dataclass(slots=True)
class Lead:
    lead_id: str
    account_id: str
    name: str
    email: str
    source: str
    note: str
    created_at: datetime
    updated_at: datetime

    @property
    def email_key(self) -> str:
        return email_key(self.email)


@dataclass(slots=True)
class LeadFields:
    """The client-owned fields of a lead, already checked and normalised."""

    name: str
    email: str
    source: str = ""
    note: str = ""

    @classmethod
    def parse(cls, *, name: str, email: str, source: str = "", note: str = "") -> LeadFields:
        try:  # the usual case, every field valid, in one go
            return cls(_name(name), _email(email), _source(source), _note(note))
        except ValueError:
            pass  # check again field by field, to name every field that is wrong
        errors: list[FieldError] = []
        checked = cls(
            name=_check(errors, "name", name, _name),
            email=_check(errors, "email", email, _email),
            source=_check(errors, "source", source, _source),
            note=_check(errors, "note", note, _note),
        )
        if errors:
            raise ValidationFailed(errors)
        return checked


@dataclass(frozen=True, slots=True)
class LeadChanges:
    """A partial update: ``None`` means "leave as it is"."""

    name: str | None = None
    email: str | None = None
    source: str | None = None
    note: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        name: str | None = None,
        email: str | None = None,
        source: str | None = None,
        note: str | None = None,
    ) -> LeadChanges:
        if name is None and email is None and source is None and note is None:
            raise ValidationFailed.one(
                "body", "must set at least one of `name`, `email`, `source`, `note`"
            )
        errors: list[FieldError] = []
        checked = cls(
            name=None if name is None else _check(errors, "name", name, _name),
            email=None if email is None else _check(errors, "email", email, _email),
            source=None if source is None else _check(errors, "source", source, _source),
            note=None if note is None else _check(errors, "note", note, _note),
        )
        if errors:
            raise ValidationFailed(errors)
        return checked

    def apply_to(self, lead: Lead, now: datetime) -> Lead:
        return replace(
            lead,
            name=lead.name if self.name is None else self.name,
            email=lead.email if self.email is None else self.email,
            source=lead.source if self.source is None else self.source,
            note=lead.note if self.note is None else self.note,
            updated_at=now,
        )


@dataclass(frozen=True, slots=True)
class LeadQuery:
    """What a lead listing asks for: newest first, one page at a time."""

    limit: int = DEFAULT_PAGE_SIZE
    after: PageCursor | None = None
    email: str | None = None  # compared as an email key
    source: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        email: str | None = None,
        source: str | None = None,
    ) -> LeadQuery:
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationFailed.one("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
        key: str | None = None
        if email is not None:
            try:
                key = email_key(normalise_email(email))
            except InvalidAddress:
                key = email_key(email.strip())  # matches nothing stored; not an error
        return cls(
            limit=limit,
            after=None if cursor is None else PageCursor.decode(cursor),
            email=key,
            source=source,
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


def _check(errors: list[FieldError], field: str, value: str, rule: _Rule) -> str:
    try:
        return rule(value)
    except ValueError as e:
        errors.append(FieldError(field, str(e)))
        return value


def _no_breaks(value: str) -> None:
    if "\r" in value or "\n" in value:
        raise ValueError("must not contain line breaks")


def _no_nul(value: str) -> None:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")


def _name(value: str) -> str:
    _no_breaks(value)
    _no_nul(value)
    text = value.strip()
    if not text:
        raise ValueError("is required and must not be blank")
    if len(text) > MAX_NAME:
        raise ValueError(f"must be at most {MAX_NAME} characters")
    return text


def _email(value: str) -> str:
    _no_nul(value)
    try:
        return normalise_email(value)
    except InvalidAddress as e:
        raise ValueError(str(e)) from e


def _source(value: str) -> str:
    _no_breaks(value)
    _no_nul(value)
    text = value.strip()
    if len(text) > MAX_SOURCE:
        raise ValueError(f"must be at most {MAX_SOURCE} characters")
    return text


def _note(value: str) -> str:
    _no_nul(value)
    if len(value) > MAX_NOTE:
        raise ValueError(f"must be at most {MAX_NOTE} characters")
    return value
