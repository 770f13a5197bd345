"""How hard to try: retries with exponential backoff and full jitter, within a deadline.

A provider's answer is one of three things: accepted, refused for good (a 4xx other than
429: the same request would fail again), or not now (no connection, a timeout, 429, 5xx).
Only "not now" is retried.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from leadmail.domain.email import OutgoingEmail
from leadmail.domain.errors import LeadmailError

MAX_RETRY_AFTER_S = 30.0


class DeliveryError(LeadmailError):
    """One attempt to hand a message to the provider failed."""


class ProviderRejected(DeliveryError):
    """The provider refused the message; retrying the same request would not help."""

    code = "PROVIDER_REJECTED"

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"The email provider refused the message ({status}): {detail}")
        self.status = status
        self.detail = detail


class ProviderUnavailable(DeliveryError):
    """The provider could not take the message now (connection, timeout, 429, 5xx).

    ``status``: the HTTP status the provider answered (429, 5xx, ...), None when no answer
    came (a timeout, a connection refused or cut): then the request may have landed."""

    code = "PROVIDER_UNAVAILABLE"

    def __init__(
        self, detail: str, retry_after: float | None = None, *, status: int | None = None
    ) -> None:
        super().__init__(f"The email provider is unavailable: {detail}")
        self.detail = detail
        self.retry_after = retry_after
        self.status = status

    @property
    def throttled(self) -> bool:
        """A 429: the provider asks every sender on its lane to slow down."""
        return self.status == 429


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One message of a batch request: the email and our message id for it."""

    email: OutgoingEmail
    message_id: str


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What became of one message of a batch request the provider answered: its id
    (None if the answer carried none), or the provider's refusal of that message alone."""

    message_id: str
    provider_message_id: str | None
    error: ProviderRejected | None = None


def check_batch(items: Sequence[BatchItem], limit: int) -> None:
    """A batch holds 1..``limit`` messages, each message id once (the answer is matched to
    them by place, and a batch's results are recorded by message id)."""
    if not 1 <= len(items) <= limit:
        raise ValueError(f"a batch holds 1 to {limit} messages, got {len(items)}")
    if len({item.message_id for item in items}) != len(items):
        raise ValueError("a batch holds each message id once")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    deadline: float = 20.0  # seconds for all attempts of one request, waits included

    def delay_before(
        self,
        attempt: int,
        retry_after: float | None,
        remaining: float,
        rand: Callable[[], float] = random.random,
    ) -> float | None:
        """Seconds to wait before attempt number ``attempt`` (2, 3, ...), or None to give up.

        Full jitter: uniform in [0, min(max_delay, base * 2**(attempt-2))]. A provider's
        Retry-After (capped at 30 s) is honoured as a floor. Giving up when the wait would
        not leave time for the attempt itself keeps the whole request inside the deadline.
        """
        if attempt > self.max_attempts:
            return None
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 2))
        wait = rand() * ceiling
        if retry_after is not None:
            wait = max(wait, min(max(retry_after, 0.0), MAX_RETRY_AFTER_S))
        if wait >= remaining:
            return None
        return float(wait)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header in its delta-seconds form; dates are ignored."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return min(seconds, MAX_RETRY_AFTER_S)
