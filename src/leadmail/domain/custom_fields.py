"""Custom fields: a school's own facts about a lead ("course_of_interest", "city"), a small
object of named text, numbers and booleans."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from leadmail.domain.errors import FieldError, ValidationFailed

MAX_FIELDS = 50  # keys per lead, and per object a request sends
MAX_FIELD_TEXT = 1_000  # characters of a text value
MAX_FIELDS_BYTES = 8_192  # the whole object, as compact UTF-8 JSON
FIELD_KEY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

FieldValue = str | int | float | bool
CustomFields = Mapping[str, FieldValue]  # never holds None: null means "no value"


def encode_fields(fields: Mapping[str, Any]) -> str:
    """The object as compact JSON, keys sorted: how it is measured and stored as text."""
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def check_key(key: str) -> str | None:
    """Why ``key`` is no custom field's name (None: it is one)."""
    if FIELD_KEY.fullmatch(key):
        return None
    return "is not a field name: a lower-case letter, then up to 63 of a-z 0-9 _"


def check_value(value: object) -> str | None:
    """Why ``value`` cannot be a custom field's value (None: it can)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        if len(value) > MAX_FIELD_TEXT:
            return f"must be at most {MAX_FIELD_TEXT} characters"
        if "\x00" in value:
            return "must not contain NUL characters"
        return None
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "must be a finite number"
    return "must be text, a number, a boolean or null"


def _errors(values: Mapping[str, object], field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if len(values) > MAX_FIELDS:
        errors.append(FieldError(field, f"must hold at most {MAX_FIELDS} fields"))
    for key, value in values.items():
        problem = check_key(key) if isinstance(key, str) else "is not a field name"
        if problem is None:
            problem = check_value(value)
        if problem is not None:
            errors.append(FieldError(f"{field}.{key}", problem))
    return errors


def _bounded(result: dict[str, FieldValue], field: str) -> dict[str, FieldValue]:
    if len(result) > MAX_FIELDS:
        raise ValidationFailed.one(field, f"would give the lead more than {MAX_FIELDS} fields")
    if len(encode_fields(result).encode()) > MAX_FIELDS_BYTES:
        raise ValidationFailed.one(field, f"must be at most {MAX_FIELDS_BYTES} bytes as JSON")
    return result


def parse_fields(values: Mapping[str, object], field: str = "fields") -> dict[str, FieldValue]:
    """A new lead's custom fields: every key and value checked (a broken one named
    ``fields.<key>``); a null value is no value, and is not kept."""
    if not values:  # most leads: nothing to check
        return {}
    errors = _errors(values, field)
    if errors:
        raise ValidationFailed(errors)
    kept: dict[str, FieldValue] = {k: v for k, v in values.items() if v is not None}  # type: ignore[misc]
    return _bounded(kept, field)


def check_patch(values: Mapping[str, object], field: str = "fields") -> dict[str, object]:
    """An update's custom fields, checked: a value to set, or null to remove the key."""
    errors = _errors(values, field)
    if errors:
        raise ValidationFailed(errors)
    return dict(values)


def merge_fields(
    current: CustomFields, patch: Mapping[str, object], field: str = "fields"
) -> dict[str, FieldValue]:
    """``current`` with ``patch`` merged key by key (a null removes its key), within the
    limits of a lead's fields."""
    result = dict(current)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value  # type: ignore[assignment]  # checked by check_patch
    return _bounded(result, field)


def same_value(stored: FieldValue, wanted: FieldValue) -> bool:
    """Equality of field values by JSON type: true is not 1, "42" is not 42, 42 is 42.0."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    if isinstance(stored, str) or isinstance(wanted, str):
        return isinstance(stored, str) and isinstance(wanted, str) and stored == wanted
    return stored == wanted
