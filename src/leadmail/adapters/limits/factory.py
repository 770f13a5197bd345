"""The RateLimiter that Settings ask for, and what it means for several processes."""

from __future__ import annotations

import structlog

from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.storage import rate_limiter_from
from leadmail.config import Settings
from leadmail.domain.pacing import email_lane

log = structlog.get_logger("leadmail")


def rate_limiter_for(settings: Settings) -> LaneLimiter:
    """The provider's lane at LEADMAIL_EMAIL_RATE (or the provider's default), kept in
    Redis when LEADMAIL_REDIS_URL is set, else in this process."""
    rates = {email_lane(settings.email_provider): settings.email_pacing().rate}
    return rate_limiter_from(settings.redis_url, rates)


def rate_per_process(settings: Settings) -> bool:
    """Whether the rate would hold per process rather than across them: on Postgres (where
    several processes may send) with a rate and no Redis to share the counts."""
    return not settings.is_sqlite and settings.email_pacing().rate > 0 and not settings.redis_url


def warn_if_rate_per_process(settings: Settings) -> None:
    """Said once at the start of a process that sends (a server, a worker)."""
    if rate_per_process(settings):
        log.warning(
            "email_rate_per_process",
            detail="LEADMAIL_REDIS_URL is not set: LEADMAIL_EMAIL_RATE holds in each process"
            " on its own, not across them",
            rate=settings.email_pacing().rate,
        )
