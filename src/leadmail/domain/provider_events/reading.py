"""Reading a provider's decoded JSON (dicts, lists, strings, numbers) without trusting its
shape: each reader answers a value of the type asked for, or None."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from leadmail.domain.message_events import ProviderEvent

# Epoch seconds past which a moment is surely not one (year 10000): a bad value, not a date.
_LATEST = 253_402_300_799


@dataclass
class Reading:
    """What a provider's payload held: its events we keep, and how many we did not,
    because their type is not one we keep (``ignored``: "sent", "processed", an unsubscribe
    from the provider's own page) or because they could not be read (``unreadable``)."""

    events: list[ProviderEvent] = field(default_factory=list)
    ignored: int = 0
    unreadable: int = 0

    def add(self, other: Reading) -> None:
        self.events += other.events
        self.ignored += other.ignored
        self.unreadable += other.unreadable


def obj(value: Any, *path: str) -> Mapping[str, Any] | None:
    """The object at ``path`` (keys, in turn) inside ``value``, or None."""
    found = at(value, *path)
    return found if isinstance(found, Mapping) else None


def text(value: Any, *path: str) -> str | None:
    found = at(value, *path)
    return found if isinstance(found, str) else None


def texts(value: Any, *path: str) -> tuple[str, ...]:
    """A list of strings (the others dropped), or one string as a list of one."""
    found = at(value, *path)
    if isinstance(found, str):
        return (found,)
    if isinstance(found, list):
        return tuple(item for item in found if isinstance(item, str))
    return ()


def ident(value: Any, *path: str) -> str | None:
    """An id written as a string or as an integer (Postmark's record ids are numbers)."""
    found = at(value, *path)
    if isinstance(found, bool):
        return None
    if isinstance(found, int):
        return str(found)
    return found if isinstance(found, str) and found else None


def epoch(value: Any, *path: str) -> datetime | None:
    """Seconds since 1970 (an integer, a fraction, or their text) as a UTC moment."""
    found = at(value, *path)
    if isinstance(found, str):
        try:
            found = float(found)
        except ValueError:
            return None
    if isinstance(found, bool) or not isinstance(found, int | float):
        return None
    if not 0 <= found <= _LATEST:  # NaN fails this too
        return None
    return datetime.fromtimestamp(found, UTC)


def iso(value: Any, *path: str) -> datetime | None:
    """An ISO 8601 moment; one without an offset is taken as UTC."""
    found = at(value, *path)
    if not isinstance(found, str):
        return None
    try:
        moment = datetime.fromisoformat(found)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def at(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
