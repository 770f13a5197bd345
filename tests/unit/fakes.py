"""Test doubles for the unit suite. The memory adapters are real; only time is faked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


class FakeClock:
    """A clock that stands still until told to move: ``clock()`` returns ``clock.now``."""

    def __init__(self, start: datetime = START, *, tick: timedelta = timedelta(0)) -> None:
        self.now = start
        self.tick = tick
        self.calls = 0

    def __call__(self) -> datetime:
        moment = self.now
        self.now += self.tick
        self.calls += 1
        return moment

    def advance(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now
