"""The RateLimiter that Settings ask for: kept where every process that sends shares it."""

from __future__ import annotations

from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.storage import rate_limiter_from
from leadmail.config import Settings
from leadmail.domain.pacing import email_lane
from leadmail.ports.rate_limits import LimitStorage


def rate_limiter_for(settings: Settings, database: LimitStorage | None = None) -> LaneLimiter:
    """The provider's lane at LEADMAIL_EMAIL_RATE (or the provider's default), kept in
    Redis when LEADMAIL_REDIS_URL is set; else in ``database`` when given (the Postgres
    every process of the service shares: adapters/db/rate_limits.py); else in this process
    (SQLite, where one process sends; and the memory adapters)."""
    rates = {email_lane(settings.email_provider): settings.email_pacing().rate}
    return rate_limiter_from(settings.redis_url, rates, shared=database)
