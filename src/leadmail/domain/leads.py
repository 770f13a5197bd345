"""Leads: a course business's prospective students, and the rules every lead obeys."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, TypeVar

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.custom_fields import CustomFields, check_patch, merge_fields, parse_fields
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.ids import id_rule, new_id
from leadmail.domain.tags import Tags, tag_list
from leadmail.domain.text import NOT_ONE_LINE, breaks_line

MAX_NAME = 200
MAX_SOURCE = 100
MAX_NOTE = 10_000
MAX_PHONE = 32
PHONE_CHARACTERS = r"0-9 +()\-."  # a regular-expression class: digits, space, + - ( ) .
PHONE_PATTERN = re.compile(f"[{PHONE_CHARACTERS}]+")
LEAD_ID_PREFIX = "ld_"
LEAD_ID = id_rule(LEAD_ID_PREFIX)
T = TypeVar("T")

# Fields the service owns: a client that sends them is told so, by name.
READ_ONLY_FIELDS = frozenset({"lead_id", "created_at", "updated_at", "account", "account_id"})


def new_lead_id() -> str:
    """An opaque, unguessable id: 128 random bits, URL-safe."""
    return new_id(LEAD_ID_PREFIX)


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
    tags: Tags = ()  # lower-case, trimmed, unique, sorted (domain/tags.py)
    fields: CustomFields = field(default_factory=dict)  # custom fields (custom_fields.py)

    @property
    def email_key(self) -> str:
        return email_key(self.email)

    @classmethod
    def new(cls, lead_id: str, account_id: str, given: LeadFields, now: datetime) -> Lead:
        return cls(
            lead_id,
            account_id,
            given.name,
            given.email,
            given.source,
            given.note,
            given.phone,
            now,
            now,
            given.tags,
            given.fields,
        )


@dataclass(frozen=True, slots=True)
class LeadFields:
    """The client-owned fields of a lead, already checked and normalised."""

    name: str
    email: str
    source: str = ""
    note: str = ""
    phone: str = ""
    tags: Tags = ()
    fields: CustomFields = field(default_factory=dict)

    @classmethod
    def parse(cls, **values: Any) -> LeadFields:
        """Every field checked by its rule (RULES, tags.py, custom_fields.py); every field
        that breaks one is named. An omitted text field is "" (which ``name`` and
        ``email`` refuse); ``tags`` is a sequence of text, ``fields`` a mapping."""
        tags: Sequence[str] = values.pop("tags", ())
        fields: Mapping[str, object] = values.pop("fields", None) or {}
        if not values.keys() <= RULES.keys():
            raise TypeError(f"not fields of a lead: {sorted(values.keys() - RULES.keys())}")
        errors: list[FieldError] = []
        try:  # the usual case, every field valid, in one go
            texts = [rule(values.get(name, "")) for name, rule in RULES.items()]
        except ValueError:  # check again field by field, to name every field that is wrong
            texts = [_check(errors, name, values.get(name, "")) for name in RULES]
        # Most leads come with neither tags nor fields: nothing to check then.
        checked_tags = (_collect(errors, tag_list, tags, "tags") or ()) if tags else ()
        checked_fields = (_collect(errors, parse_fields, fields, "fields") or {}) if fields else {}
        if errors:
            raise ValidationFailed(errors)
        name, email, source, note, phone = texts
        return cls(name, email, source, note, phone, checked_tags, checked_fields)


@dataclass(frozen=True, slots=True)
class LeadChanges:
    """A partial update: ``None`` means "leave as it is"."""

    name: str | None = None
    email: str | None = None
    source: str | None = None
    note: str | None = None
    phone: str | None = None
    tags: Tags | None = None  # the new set, replacing the old
    fields: Mapping[str, object] | None = None  # merged key by key; null removes a key

    @classmethod
    def parse(cls, **values: Any) -> LeadChanges:
        """Text fields by name, ``tags`` (a sequence of text) and ``fields`` (a mapping);
        None is "leave as it is"."""
        tags: Sequence[str] | None = values.pop("tags", None)
        fields: Mapping[str, object] | None = values.pop("fields", None)
        given = {name: value for name, value in values.items() if value is not None}
        if not given and tags is None and fields is None:
            listed = ", ".join(f"`{name}`" for name in CLIENT_FIELDS)
            raise ValidationFailed.one("body", f"must set at least one of {listed}")
        errors: list[FieldError] = []
        checked = {name: _check(errors, name, value) for name, value in given.items()}
        new_tags = None if tags is None else _collect(errors, tag_list, tags, "tags")
        patch = None if fields is None else _collect(errors, check_patch, fields, "fields")
        if errors:
            raise ValidationFailed(errors)
        return cls(**checked, tags=new_tags, fields=patch)

    def apply_to(self, lead: Lead, now: datetime) -> Lead:
        """The lead changed. Raises ValidationFailed when merged fields pass their limits."""
        changed: dict[str, object] = {
            name: value for name in TEXT_FIELDS if (value := getattr(self, name)) is not None
        }
        if self.tags is not None:
            changed["tags"] = self.tags
        if self.fields is not None:
            changed["fields"] = merge_fields(lead.fields, self.fields)
        return replace(lead, updated_at=now, **changed)  # type: ignore[arg-type]


def _collect(
    errors: list[FieldError], parse: Callable[[Any, str], T], value: Any, name: str
) -> T | None:
    """``parse(value, name)``, or None with its errors added to ``errors``."""
    try:
        return parse(value, name)
    except ValidationFailed as e:
        errors.extend(e.errors)
        return None


def _check(errors: list[FieldError], field: str, value: str) -> str:
    try:
        return RULES[field](value)
    except ValueError as e:
        errors.append(FieldError(field, str(e)))
        return value


def _one_line(value: str) -> None:
    if breaks_line(value):
        raise ValueError(NOT_ONE_LINE)


def _no_nul(value: str) -> None:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")


def _name(value: str) -> str:
    _one_line(value)  # a NUL among the rest
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
    _one_line(value)
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


# The rule of each client-owned text field, in LeadFields' order: checks a value and
# returns it as stored.
RULES: dict[str, Callable[[str], str]] = {
    "name": _name,
    "email": _email,
    "source": _source,
    "note": _note,
    "phone": _phone,
}
CLIENT_FIELDS = tuple(f.name for f in fields(LeadFields))
TEXT_FIELDS = CLIENT_FIELDS[: len(RULES)]
if tuple(RULES) != TEXT_FIELDS or CLIENT_FIELDS[len(RULES) :] != ("tags", "fields"):
    raise TypeError("RULES must name LeadFields' text fields, in their order")
