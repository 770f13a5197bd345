"""How often a caller may call: a budget of requests per minute for each bucket (an API key,
or a client address on the public pages), shared by every process that shares the storage.

The HTTP adapter asks before a request is served and says the budget in the answer's
``RateLimit-*`` headers; the counting is an adapter's (adapters/limits/requests.py: the
`limits` package, in this process's memory or in Redis).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from leadmail.domain.errors import LeadmailError


@dataclass(frozen=True, slots=True)
class Allowance:
    """One request counted (``allowed``) or refused, and the budget after it."""

    allowed: bool
    limit: int  # requests per window
    remaining: int  # requests left in the window now
    reset_after: float  # seconds until a place frees (refused: until one may be taken)

    def headers(self) -> list[tuple[str, str]]:
        """The ``RateLimit-*`` headers (IETF draft-ietf-httpapi-ratelimit-headers)."""
        return [
            ("ratelimit-limit", str(self.limit)),
            ("ratelimit-remaining", str(self.remaining)),
            ("ratelimit-reset", str(max(0, math.ceil(self.reset_after)))),
        ]


class RateLimited(LeadmailError):
    """Over the caller's budget: nothing was done; try again after ``retry_after`` s."""

    code = "RATE_LIMITED"

    def __init__(self, allowance: Allowance, per: str) -> None:
        self.retry_after = max(1, math.ceil(allowance.reset_after))
        super().__init__(
            f"More than {allowance.limit} requests a minute {per}; retry in {self.retry_after} s"
        )


class RequestLimiter(Protocol):
    async def hit(self, bucket: str) -> Allowance:
        """Count one request of ``bucket`` if it fits the budget; else count nothing.
        Raises LimiterUnavailable when the shared storage cannot be reached."""
        ...

    async def peek(self, bucket: str) -> Allowance:
        """Whether one more would fit (``allowed``) and the budget now, counting nothing:
        for budgets charged only for some outcomes (a failed sign-in). Raises
        LimiterUnavailable as ``hit`` does."""
        ...

    async def close(self) -> None:
        """Give back the storage's connections (once, at shutdown)."""
        ...
