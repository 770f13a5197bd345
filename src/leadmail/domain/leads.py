"""Leads: a course business's prospective students, and the rules every lead obeys."""

from __future__ import annotations

import operator
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import datetime

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import FieldError, ValidationFailed

MAX_NAME = 200
MAX_SOURCE = 100
MAX_NOTE = 10_000
MAX_PHONE = 32
PHONE_CHARACTERS = r"0-9 +()\-."  # a regular-expression class: digits, space, + - ( ) .
PHONE_PATTERN = re.compile(f"[{PHONE_CHARACTERS}]+")
LEAD_ID_PREFIX = "ld_"

# Fields the service owns: a client that sends them is told so, by name.
READ_ONLY_FIELDS = frozenset({"lead_id", "created_at", "updated_at", "account", "account_id"})


def new_lead_id() -> str:
    """An opaque, unguessable id: 128 random bits, URL-safe."""
    return LEAD_ID_PREFIX + secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class Lead:
    lead_id: str
    account_id: str
    # The client-owned fields, in LeadFields' order.
    name: str
    email: str
    source: str
    note: str
    phone: str
    created_at: datetime
    updated_at: datetime

    @property
    def email_key(self) -> str:
        return email_key(self.email)

    @classmethod
    def new(cls, lead_id: str, account_id: str, fields: LeadFields, now: datetime) -> Lead:
        return cls(lead_id, account_id, *_client_values(fields), now, now)  # type: ignore[call-arg]


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
        """Every field checked by its rule (RULES); every field that breaks one is named.
        An omitted field is "" (which ``name`` and ``email`` refuse)."""
        if not values.keys() <= RULES.keys():
            raise TypeError(f"not fields of a lead: {sorted(values.keys() - RULES.keys())}")
        try:  # the usual case, every field valid, in one go
            return cls(*[rule(values.get(name, "")) for name, rule in RULES.items()])
        except ValueError:
            pass  # check again field by field, to name every field that is wrong
        errors: list[FieldError] = []
        checked = [_check(errors, name, values.get(name, "")) for name in RULES]
        if errors:
            raise ValidationFailed(errors)
        return cls(*checked)


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
    if len(value) > MAX_PHONE:  # as sent (spaces around it included)
        raise ValueError(f"must be at most {MAX_PHONE} characters")
    if text and (not PHONE_PATTERN.fullmatch(text) or not any(c.isdigit() for c in text)):
        raise ValueError(
            "must be a phone number: digits, spaces and + - ( ) . only, e.g. +44 20 7946 0958"
        )
    return text


# The rule of each client-owned field, in LeadFields' order: checks a value and returns it
# as stored.
RULES: dict[str, Callable[[str], str]] = {
    "name": _name,
    "email": _email,
    "source": _source,
    "note": _note,
    "phone": _phone,
}
CLIENT_FIELDS = tuple(f.name for f in fields(LeadFields))
if tuple(RULES) != CLIENT_FIELDS:
    raise TypeError("RULES must name LeadFields' fields, in their order")
_client_values = operator.attrgetter(*CLIENT_FIELDS)  # one tuple of them, in one C call
