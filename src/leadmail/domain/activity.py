"""An account's activity over its last days, as the dashboard's overview draws it: leads
added a day, messages a day by outcome, and the suppression list by reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

DAYS = 30
# A message's outcome as the overview counts it: its status, events applied (a message
# pending or never sent is no outcome yet).
OUTCOMES = ("sent", "delivered", "bounced", "complained", "failed")
REASONS = ("unsubscribed", "bounced", "complained", "manual")


def days_back(now: datetime, days: int = DAYS) -> tuple[date, ...]:
    """The last ``days`` UTC days, oldest first, today last."""
    today = now.astimezone(UTC).date()
    return tuple(today - timedelta(days=n) for n in range(days - 1, -1, -1))


@dataclass(frozen=True, slots=True)
class Activity:
    days: tuple[date, ...]  # oldest first
    leads_total: int
    leads_added: tuple[int, ...]  # a day, in the order of ``days``
    messages: Mapping[str, tuple[int, ...]]  # outcome -> a day
    suppressions: Mapping[str, int]  # reason -> entries now

    @classmethod
    def of(
        cls,
        days: tuple[date, ...],
        leads_total: int,
        leads_by_day: Mapping[date, int],
        messages_by_day: Mapping[tuple[date, str], int],
        suppressions: Mapping[str, int],
    ) -> Activity:
        """From what storage counted (days and outcomes it found none of are 0)."""
        return cls(
            days,
            leads_total,
            tuple(leads_by_day.get(day, 0) for day in days),
            {o: tuple(messages_by_day.get((day, o), 0) for day in days) for o in OUTCOMES},
            {reason: suppressions.get(reason, 0) for reason in REASONS},
        )

    @property
    def leads_in_period(self) -> int:
        return sum(self.leads_added)

    def messages_on(self, index: int) -> int:
        return sum(counts[index] for counts in self.messages.values())

    @property
    def busiest_day(self) -> int:
        """The most messages of any one day (the chart's scale); at least 1."""
        return max([1, *(self.messages_on(i) for i in range(len(self.days)))])
