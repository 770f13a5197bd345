"""Segments: which leads of an account a listing, a count or a campaign means, as one filter.

Written as query parameters (``?tag=march&field.city=Leeds``) or as a JSON object with the
same names (``{"tag": ["march"], "field.city": "Leeds"}``); both are checked by the same
rules, and anything unknown or malformed is refused naming the parameter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.custom_fields import (
    MAX_FIELD_TEXT,
    MAX_FIELDS,
    FieldValue,
    check_key,
    check_value,
)
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.leads import Lead
from leadmail.domain.tags import MAX_TAGS, Tags, normalise_tag, tags_of
from leadmail.domain.text_match import field_matches, fold, search_matches

# Repeatable: the lead has every ``tag``, at least one ``any_tag``, no ``not_tag``.
TAG_FILTERS = ("tag", "any_tag", "not_tag")
EXACT_FILTERS = ("email", "source", "phone")  # exact values (email: the same mailbox)
TIME_FILTERS = ("created_after", "created_before")  # RFC 3339, strictly after / before
FIELD_PREFIX = "field."  # field.<key>=<value>: the custom field has exactly that value
SEARCH_FILTER = "q"  # a prefix of a word of the name, or of the address, in any case
FILTER_NAMES = (*TAG_FILTERS, *EXACT_FILTERS, *TIME_FILTERS, SEARCH_FILTER)
MAX_SEARCH = 254  # characters of ``q``: the longest address
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
RFC3339 = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)"
    r"(?:([Zz])|([+ -])([0-9]{2}:[0-9]{2}))"  # " ": a "+" a query string turned to a space
)
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class LeadFilter:
    """The leads whose ``equals`` attributes have those values, that have every tag of
    ``all_tags``, one of ``any_tags`` (if any), none of ``no_tags``, were created strictly
    between the two moments given, whose custom fields have the ``fields`` values
    (``field_matches``: text in any case, the rest by JSON type), and that ``search``
    finds (``search_matches``; folded, "" for none)."""

    equals: tuple[tuple[str, str], ...] = ()  # (attribute of Lead, value)
    all_tags: Tags = ()
    any_tags: Tags = ()
    no_tags: Tags = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    fields: tuple[tuple[str, FieldValue], ...] = ()
    search: str = ""

    @classmethod
    def parse(cls, pairs: Iterable[tuple[str, str]]) -> LeadFilter:
        """From query parameters, (name, value) as sent; a name may repeat."""
        grouped: dict[str, list[object]] = {}
        for name, value in pairs:
            grouped.setdefault(name, []).append(value)
        return _build(grouped, typed=False)

    @classmethod
    def from_json(cls, mapping: Mapping[str, object]) -> LeadFilter:
        """From a JSON object with the parameters' names: a tag filter takes a string or a
        list of strings; ``field.<key>`` takes a JSON value, compared as that type."""
        grouped: dict[str, list[object]] = {}
        for name, value in mapping.items():
            if name in TAG_FILTERS and isinstance(value, list):
                grouped[name] = list(value)
            else:
                grouped[name] = [value]
        return _build(grouped, typed=True)

    def to_json(self) -> dict[str, object]:
        """The filter as ``from_json`` reads it back (the same filter): tag filters as
        lists, moments in RFC 3339 (UTC), custom field values as their own JSON type."""
        found: dict[str, object] = {}
        for name, tags in zip(
            TAG_FILTERS, (self.all_tags, self.any_tags, self.no_tags), strict=True
        ):
            if tags:
                found[name] = list(tags)
        for attribute, value in self.equals:
            found["email" if attribute == "email_key" else attribute] = value
        for name, at in zip(TIME_FILTERS, (self.created_after, self.created_before), strict=True):
            if at is not None:
                found[name] = at.astimezone(UTC).isoformat().replace("+00:00", "Z")
        for key, field_value in self.fields:
            found[FIELD_PREFIX + key] = field_value
        if self.search:
            found[SEARCH_FILTER] = self.search
        return found

    def matches(self, lead: Lead) -> bool:
        tags = set(lead.tags)
        return (
            all(getattr(lead, attribute) == value for attribute, value in self.equals)
            and tags.issuperset(self.all_tags)
            and (not self.any_tags or not tags.isdisjoint(self.any_tags))
            and tags.isdisjoint(self.no_tags)
            and (self.created_after is None or lead.created_at > self.created_after)
            and (self.created_before is None or lead.created_at < self.created_before)
            and all(
                key in lead.fields and field_matches(lead.fields[key], value)
                for key, value in self.fields
            )
            and (not self.search or search_matches(lead.name, lead.email_key, self.search))
        )


def _build(grouped: dict[str, list[object]], *, typed: bool) -> LeadFilter:
    errors: list[FieldError] = []
    tags: dict[str, Tags] = {}
    equals: list[tuple[str, str]] = []
    times: dict[str, datetime] = {}
    fields: list[tuple[str, FieldValue]] = []
    search = ""
    for name, values in grouped.items():
        try:
            if name in TAG_FILTERS:
                tags[name] = _tags(values)
                continue
            if name.startswith(FIELD_PREFIX):
                problem = check_key(name.removeprefix(FIELD_PREFIX))
                if problem is not None:
                    raise ValueError(f"names no custom field: the key {problem}")
            elif name not in FILTER_NAMES:
                raise ValueError(f"is not a filter; filters are {', '.join(FILTER_NAMES)}"
                                 f" and {FIELD_PREFIX}<key>")  # fmt: skip
            if len(values) != 1:
                raise ValueError("may be given only once")
            [value] = values
            if name.startswith(FIELD_PREFIX):
                fields.append((name.removeprefix(FIELD_PREFIX), _field_value(value, typed)))
            elif name in TIME_FILTERS:
                times[name] = moment(_text(value))
            elif name == SEARCH_FILTER:
                search = _search(_text(value))
            else:
                equals.append(_exact(name, _text(value)))
        except ValueError as e:
            errors.append(FieldError(name, str(e)))
    if len(fields) > MAX_FIELDS:
        errors.append(FieldError(FIELD_PREFIX + "<key>", f"at most {MAX_FIELDS} field filters"))
    if errors:
        raise ValidationFailed(errors)
    return LeadFilter(
        equals=tuple(equals),
        all_tags=tags.get("tag", ()),
        any_tags=tags.get("any_tag", ()),
        no_tags=tags.get("not_tag", ()),
        created_after=times.get("created_after"),
        created_before=times.get("created_before"),
        fields=tuple(sorted(fields)),
        search=search,
    )


def _search(value: str) -> str:
    """Folded and trimmed; blank is no search (a search box left empty)."""
    if len(value) > MAX_SEARCH:
        raise ValueError(f"must be at most {MAX_SEARCH} characters")
    return fold(value.strip())


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")  # only a JSON filter can hold anything else
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _tags(values: list[object]) -> Tags:
    if not values:  # only a JSON filter can be an empty list; {} is what selects everyone
        raise ValueError("must not be an empty list (leave the filter out instead)")
    if len(values) > MAX_TAGS:
        raise ValueError(f"may be given at most {MAX_TAGS} times")
    return tags_of(normalise_tag(_text(value)) for value in values)


def _exact(name: str, value: str) -> tuple[str, str]:
    if name == "email":
        try:
            return "email_key", email_key(normalise_email(value))
        except InvalidAddress:
            return "email_key", email_key(value.strip())  # matches nothing stored
    if name == "phone":
        return "phone", value.strip()
    return name, value


def _field_value(value: object, typed: bool) -> FieldValue:
    """A query's text compares as true, false or a number when it spells one; a JSON
    filter's value compares as its own type."""
    if typed and not isinstance(value, str):
        problem = check_value(value) if value is not None else "must not be null"
        if problem is not None:
            raise ValueError(problem)
        return value  # type: ignore[return-value]  # checked: bool, int or float
    text = _text(value)
    if len(text) > MAX_FIELD_TEXT:
        raise ValueError(f"must be at most {MAX_FIELD_TEXT} characters")
    if typed:
        return text
    if text in ("true", "false"):
        return text == "true"
    if NUMBER.fullmatch(text):
        number = float(text) if any(c in text for c in ".eE") else int(text)
        if not _finite(number):
            raise ValueError("is a number too large to compare")
        return number
    return text


def _finite(number: float) -> bool:
    """Within the range of a double, as every stored number is compared (an integer of 309
    digits is not: math.isfinite cannot even convert it)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def moment(value: str) -> datetime:
    """An RFC 3339 date-time (with its offset, or Z) as an instant in UTC."""
    match = RFC3339.fullmatch(value.strip())
    if match is None:
        raise ValueError("must be an RFC 3339 date-time, e.g. 2026-03-02T09:30:00Z")
    day, time, zulu, sign, offset = match.groups()
    text = f"{day}T{time}{'+00:00' if zulu else ('-' if sign == '-' else '+') + offset}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as e:
        raise ValueError("must be an RFC 3339 date-time, e.g. 2026-03-02T09:30:00Z") from e
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # within a day of year 1 or year 9999, in UTC out of range
        return _FIRST if parsed.year == 1 else _LAST
