"""Leads: a course business's prospective students, and the rules every lead obeys."""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import FieldError, ValidationFailed

MAX_NAME = 200
MAX_SOURCE = 100
MAX_NOTE = 10_000
MAX_PHONE = 32
PHONE_PATTERN = re.compile(r"[0-9 +()\-.]+")
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50
LEAD_ID_PREFIX = "ld_"
MAX_CURSOR_LENGTH = 512  # ours are about 90 characters

# Fields the service owns: a client that sends them is told so, by name.
READ_ONLY_FIELDS = frozenset({"lead_id", "created_at", "updated_at", "account", "account_id"})


def new_lead_id() -> str:
    """An opaque, unguessable id: 128 random bits, URL-safe."""
    return LEAD_ID_PREFIX + secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class Lead:
    lead_id: str
    account_id: str
    name: str
    email: str
    source: str
    note: str
    created_at: datetime
    updated_at: datetime
    phone: str = ""

    @property
    def email_key(self) -> str:
        return email_key(self.email)

    @classmethod
    def new(cls, lead_id: str, account_id: str, fields: LeadFields, now: datetime) -> Lead:
        return cls(
            lead_id=lead_id,
            account_id=account_id,
            created_at=now,
            updated_at=now,
            **{name: getattr(fields, name) for name in CLIENT_FIELDS},
        )


@dataclass(frozen=True, slots=True)
class LeadFields:
    """The client-owned fields of a lead, already checked and normalised."""

    name: str
    email: str
    source: str = ""
    note: str = ""
    phone: str = ""

    @classmethod
    def parse(cls, **values: str) -> LeadFields:
        """Every field checked by its rule (RULES); every field that breaks one is named."""
        try:  # the usual case, every field valid, in one go
            return cls(**{name: RULES[name](value) for name, value in values.items()})
        except ValueError:
            pass  # check again field by field, to name every field that is wrong
        errors: list[FieldError] = []
        checked = {name: _check(errors, name, value) for name, value in values.items()}
        if errors:
            raise ValidationFailed(errors)
        return cls(**checked)


@dataclass(frozen=True, slots=True)
class LeadChanges:
    """A partial update: ``None`` means "leave as it is"."""

    name: str | None = None
    email: str | None = None
    source: str | None = None
    note: str | None = None
    phone: str | None = None

    @classmethod
    def parse(cls, **values: str | None) -> LeadChanges:
        given = {name: value for name, value in values.items() if value is not None}
        if not given:
            listed = ", ".join(f"`{name}`" for name in CLIENT_FIELDS)
            raise ValidationFailed.one("body", f"must set at least one of {listed}")
        errors: list[FieldError] = []
        checked = {name: _check(errors, name, value) for name, value in given.items()}
        if errors:
            raise ValidationFailed(errors)
        return cls(**checked)

    def apply_to(self, lead: Lead, now: datetime) -> Lead:
        changed = {
            name: value for name in CLIENT_FIELDS if (value := getattr(self, name)) is not None
        }
        return replace(lead, updated_at=now, **changed)


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


def _check(errors: list[FieldError], field: str, value: str) -> str:
    try:
        return RULES[field](value)
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


def _phone(value: str) -> str:
    text = value.strip()
    if len(text) > MAX_PHONE:
        raise ValueError(f"must be at most {MAX_PHONE} characters")
    if text and (not PHONE_PATTERN.fullmatch(text) or not any(c.isdigit() for c in text)):
        raise ValueError(
            "must be a phone number: digits, spaces and + - ( ) . only, e.g. +44 20 7946 0958"
        )
    return text


def _email_filter(value: str) -> tuple[str, str]:
    try:
        return "email_key", email_key(normalise_email(value))
    except InvalidAddress:
        return "email_key", email_key(value.strip())  # matches nothing stored; not an error


# The rule of each client-owned field: checks a value and returns it as stored.
RULES: dict[str, Callable[[str], str]] = {
    "name": _name,
    "email": _email,
    "source": _source,
    "note": _note,
    "phone": _phone,
}
CLIENT_FIELDS = tuple(f.name for f in fields(LeadFields))

# The exact-match filters of a listing: a value as given -> (attribute of Lead, value).
FILTERS: dict[str, Callable[[str], tuple[str, str]]] = {
    "email": _email_filter,  # the same mailbox, whatever the case
    "source": lambda value: ("source", value),
    "phone": lambda value: ("phone", value.strip()),
}
