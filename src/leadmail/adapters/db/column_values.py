"""How a domain field's value becomes a column's value and back, by the field's type:
tuples as arrays or JSON text, mappings as JSON objects, enums by value, timestamps in UTC.
``Mapped`` (statements.py) builds each table's encoders and decoders from these."""

from __future__ import annotations

import collections.abc
import enum
import operator
import typing
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec
from piccolo.columns import Array

Encode = Callable[[Any], Any]


def optional_of(hint: Any) -> tuple[Any, bool]:
    args = typing.get_args(hint)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else hint), True
    return hint, False


def encoder_for(hint: Any, column: Any) -> Encode | None:
    """How a field's value is stored when not as it is (None: as it is)."""
    kind, optional = optional_of(hint)
    if typing.get_origin(kind) is tuple and isinstance(column, Array):
        # A Postgres array takes a list; on SQLite, Piccolo's adapter writes it as JSON.
        return list
    if typing.get_origin(kind) is tuple:  # stored as a JSON array in a text column
        return lambda value: _JSON.encode(list(value)).decode()
    if typing.get_origin(kind) in (Mapping, collections.abc.Mapping, dict):
        return _json_text  # JSON text: jsonb takes it as is
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        if optional:
            return _optional_value
        return operator.attrgetter("value")
    return None


def _optional_value(member: enum.Enum | None) -> Any:
    return None if member is None else member.value


# msgspec: the same JSON as json.dumps writes, less the spaces, at a fraction of its cost.
_JSON = msgspec.json.Encoder()
# Objects with their keys sorted, as encode_fields (domain/custom_fields.py) measures them.
_SORTED_JSON = msgspec.json.Encoder(order="sorted")


def _json_text(value: Mapping[str, Any]) -> str:
    return _SORTED_JSON.encode(value).decode() if value else "{}"


def decoder_for(hint: Any) -> Callable[[Any], Any]:
    kind, optional = optional_of(hint)
    decode: Callable[[Any], Any]
    if kind is datetime:
        decode = moment_of
    elif typing.get_origin(kind) is tuple:
        decode = _json_tuple
    elif typing.get_origin(kind) in (Mapping, collections.abc.Mapping, dict):
        decode = _json_object
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        decode = kind
    else:
        return _same
    if optional:
        return lambda value: None if value is None else decode(value)
    return decode


def _same(value: Any) -> Any:
    return value


def _json_tuple(value: str | list[Any]) -> tuple[Any, ...]:
    """A JSON array's text, or a list (a Postgres array; SQLite's, converted by Piccolo)."""
    return tuple(msgspec.json.decode(value) if isinstance(value, str) else value)


def _json_object(value: str | dict[str, Any]) -> dict[str, Any]:
    loaded = msgspec.json.decode(value) if isinstance(value, str) else value
    assert isinstance(loaded, dict)
    return loaded


def moment_of(value: datetime | str) -> datetime:
    """Timestamps are stored in UTC; a driver that drops the zone, or hands back text
    (SQLite, for a RETURNING clause), gets it back."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value
