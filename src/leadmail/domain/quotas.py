"""An account's daily send quota: at most so many messages a UTC day (0: no quota).

A message counts when it is recorded to be sent (a send's, a campaign's), once: a replayed
or resumed request under an Idempotency-Key is not counted again, and a recipient withheld
by the suppression list gives its place back. A send that would cross the quota sends
nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from leadmail.domain.errors import DomainError

NO_QUOTA = 0
MAX_QUOTA = 2**31 - 1


def quota_day(now: datetime) -> date:
    """The UTC day ``now`` falls in."""
    return now.astimezone(UTC).date()


def next_day_start(now: datetime) -> datetime:
    """When the UTC day after ``now``'s begins: the quota's reset."""
    return datetime.combine(quota_day(now) + timedelta(days=1), time(0), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class QuotaUse:
    """An account's quota and what it has used of today's."""

    quota: int  # messages a UTC day; NO_QUOTA: none
    sent: int  # messages counted today

    @property
    def left(self) -> int | None:
        return None if self.quota == NO_QUOTA else max(0, self.quota - self.sent)


class QuotaExceeded(DomainError):
    """The account's daily quota would be crossed: nothing was sent (or a campaign was
    paused). ``reset_at``: when the next UTC day begins."""

    code = "QUOTA_EXCEEDED"

    def __init__(self, quota: int, wanted: int, left: int, reset_at: datetime, now: datetime):
        self.quota = quota
        self.reset_at = reset_at
        self.retry_after = max(1, math.ceil((reset_at - now).total_seconds()))
        super().__init__(
            f"The account's daily quota of {quota} messages is reached: {wanted} more"
            f" requested, {left} left today; it resets at 00:00 UTC"
        )
