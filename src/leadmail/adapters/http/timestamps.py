"""Moments as the API writes them: UTC ISO 8601 with a ``Z``, to the millisecond."""

from __future__ import annotations

from datetime import UTC, datetime

# "YYYY-MM-DDTHH:MM:SS" by (year, month, day, hour, minute, second): formatting the date
# and time of day is most of the cost of isoformat, and the moments written at a time (a
# lead's created_at and updated_at, a page of leads) mostly share their second.
_SECONDS: dict[tuple[int, int, int, int, int, int], str] = {}
_MAX_SECONDS = 4096
_MILLIS = tuple(f"{n:03d}" for n in range(1000))  # "000" ... "999"


def to_iso(moment: datetime) -> str:
    """``2026-11-22T10:15:30.123Z``."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    key = (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)
    head = _SECONDS.get(key)
    if head is None:
        if len(_SECONDS) >= _MAX_SECONDS:
            _SECONDS.clear()
        y, mo, d, h, mi, sec = key
        head = _SECONDS[key] = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{sec:02d}"
    return f"{head}.{_MILLIS[moment.microsecond // 1000]}Z"


def to_iso_or_none(moment: datetime | None) -> str | None:
    """``to_iso``, or None for no moment (one that has not come: ``finished_at``)."""
    return None if moment is None else to_iso(moment)
