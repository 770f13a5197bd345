"""Time as the service sees it: UTC, millisecond precision, so what is stored is what is shown."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    # Whole milliseconds since the epoch; a float of them / 1000 is exact to well under
    # a microsecond for centuries, and fromtimestamp rounds to the nearest microsecond.
    return datetime.fromtimestamp(time.time_ns() // 1_000_000 / 1000, UTC)
