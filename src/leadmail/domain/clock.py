"""Time as the service sees it: UTC, millisecond precision, so what is stored is what is shown."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def to_iso(moment: datetime) -> str:
    """UTC ISO 8601 with a ``Z``: ``2026-11-22T10:15:30.123Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
