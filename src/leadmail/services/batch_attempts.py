"""One batch's attempts at the provider: the rate acquired right before each request (the
moments the shared limiter counts are those the provider sees), retried with backoff under
the batch's own key, a 429 holding the lane for every worker, all within the batch's time.
What the attempts came to (Delivered) is for campaign_batches.py to record."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from leadmail.domain.campaign_recipients import ClaimedBatch
from leadmail.domain.delivery import (
    BatchItem,
    DeliveryError,
    ItemResult,
    ProviderRejected,
    ProviderUnavailable,
    RetryPolicy,
)
from leadmail.ports.mail import EmailProvider
from leadmail.ports.rate_limits import RateLimiter
from leadmail.services.campaign_watch import CampaignWatch
from leadmail.services.delivery import Timer

log = logging.getLogger("leadmail.campaigns")


@dataclass(frozen=True, slots=True)
class Delivered:
    """The provider's answer (``results``), the error given up on, a retry refused for its
    reused key (``landed_before``), or none: the batch was handed back (stopped, or
    throttled too long); ``may_have_landed`` when an attempt got no answer."""

    attempts: int
    results: list[ItemResult] | None = None
    error: DeliveryError | None = None
    may_have_landed: bool = False
    landed_before: ProviderRejected | None = None


class BatchAttempts:
    """``budget``: the seconds a batch may take in all (its retry deadline, at most half
    its lease); ``hold``: how long a 429 without Retry-After holds the lane."""

    def __init__(
        self,
        provider: EmailProvider,
        limiter: RateLimiter,
        lane: str,
        retry: RetryPolicy,
        timer: Timer,
        *,
        budget: float,
        hold: float,
    ) -> None:
        self._provider = provider
        self._limiter = limiter
        self._lane = lane
        self._retry = retry
        self._timer = timer
        self._budget = budget
        self._hold = hold

    async def deliver(
        self, items: Sequence[BatchItem], batch: ClaimedBatch, watch: CampaignWatch
    ) -> Delivered:
        """Attempts until an answer, a refusal, or giving up; the status read and the
        rate acquired before each. A 429 holds the lane for every worker
        and does not count as an attempt; the batch's time (its retry deadline, at most
        half its lease) bounds it all."""
        timer, policy = self._timer, self._retry
        deadline = timer.monotonic() + self._budget
        attempts, tries, landed = 0, 1, False
        while True:
            if not await self._acquired(watch, deadline):  # stopped, or out of time
                return Delivered(attempts, may_have_landed=landed)
            attempts += 1
            error: ProviderUnavailable
            try:
                async with asyncio.timeout(max(deadline - timer.monotonic(), 0.001)):
                    results = await self._provider.send_batch(items, batch_key=batch.batch_id)
            except TimeoutError:
                error = ProviderUnavailable("no answer before the batch's deadline")
            except ProviderRejected as e:
                if batch.retried and e.status == 409:  # the key was used: it landed before
                    return Delivered(attempts, landed_before=e)
                return Delivered(attempts, error=e)
            except ProviderUnavailable as e:
                error = e
            else:
                return Delivered(attempts, results=results)
            landed = landed or error.status is None or error.status == 409
            left = deadline - timer.monotonic()
            if error.throttled:
                hold = error.retry_after if error.retry_after is not None else self._hold
                await self._limiter.hold(self._lane, hold)
                log.info("campaign_lane_held", extra={"lane": self._lane, "seconds": hold})
                if hold >= left:
                    return Delivered(attempts, may_have_landed=landed)
                wait = 0.0
            else:
                tries += 1
                backoff = policy.delay_before(tries, error.retry_after, left)
                if backoff is None:
                    return Delivered(attempts, error=error, may_have_landed=landed)
                wait = backoff
            if not (await watch.check() and await watch.sleep(wait)):
                return Delivered(attempts, may_have_landed=landed)

    async def unheld(self, watch: CampaignWatch) -> bool:
        """Wait out any hold on the lane (a 429's): False when the campaign stops first."""
        return (await watch.until(self._limiter.unheld(self._lane)))[0]

    async def _acquired(self, watch: CampaignWatch, deadline: float) -> bool:
        """The lane's rate for one request, taken right before it is made (the moments the
        limiter counts are those the provider sees, not a claim, render and store ahead of
        them); False when the campaign stops or the batch's time ends first."""
        if not watch.running:
            return False
        try:
            async with asyncio.timeout(max(deadline - self._timer.monotonic(), 0.001)):
                acquired, _ = await watch.until(self._limiter.acquire(self._lane))
        except TimeoutError:
            return False
        return acquired
