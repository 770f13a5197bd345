"""One batch of a campaign, leased by this worker, sent through the outgoing pipeline
(services/outgoing.py): each recipient's message rendered (or the recipient skipped), the
send policy applied (a suppressed recipient is never sent: one lookup for the batch), the
messages recorded pending before the provider is called, one provider request for the
batch (its batch id as the Idempotency-Key, kept by a retry) paced by the campaign's lane,
and what became of each recipient recorded on it and on its message.

A failure that the provider answered (429, 5xx) delivered nothing: a batch given up
after one (stopped, or a 429 that outlasts the batch's time) is released, its recipients
pending again. After a failure without an answer (a timeout, a cut connection) the batch
may have landed: it is left as it is, and when its lease ends another lease retries it
with the same key (a provider that keeps idempotency) or marks it ``unknown``; a retry
refused (409) for its key, an earlier try having landed, leaves it ``unknown`` too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from leadmail.domain.addresses import email_key
from leadmail.domain.campaign_recipients import (
    LANDED_BEFORE,
    LeasedBatch,
    Letter,
    RecipientOutcome,
    render_for,
)
from leadmail.domain.campaigns import HANDED_BACK, Campaign, RecipientStatus
from leadmail.domain.clock import Clock
from leadmail.domain.delivery import BatchItem, ProviderUnavailable, RetryPolicy
from leadmail.domain.email import Message, SenderNotAllowed
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.quotas import QuotaExceeded
from leadmail.ports.campaigns import RecipientRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.messages import MessageRepository
from leadmail.ports.rate_limits import RateLimiter
from leadmail.services.campaign_watch import CampaignWatch
from leadmail.services.outgoing import Outgoing, Timer
from leadmail.services.quotas import NOTHING, SendQuota
from leadmail.services.send_policy import SendPolicy
from leadmail.services.unsubscribes import Unsubscribes

log = logging.getLogger("leadmail.campaigns")
_S = RecipientStatus
RENDER_SLICE = 50  # messages rendered between two yields to the event loop


@dataclass(frozen=True, slots=True)
class CampaignSettings:
    """``batch``: recipients per provider request; ``in_flight``: batches one process has
    at the provider at once per campaign; ``poll``: how often the campaign's status is
    read while it runs; ``hold``: how long a 429 without Retry-After holds the lane."""

    lease: timedelta = timedelta(seconds=60)
    batch: int = 1
    in_flight: int = 4
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    poll: float = 0.5
    hold: float = 1.0


class LanePace:
    """A campaign batch's pace: the lane's rate acquired from the shared limiter right
    before each request (the moments it counts are those the provider sees, not a lease,
    render and store ahead of them); a 429 holds the lane for every worker; every wait
    ends when the campaign stops."""

    paced = True

    def __init__(
        self, limiter: RateLimiter, lane: str, watch: CampaignWatch, timer: Timer, hold: float
    ) -> None:
        self._limiter = limiter
        self._lane = lane
        self._watch = watch
        self._timer = timer
        self._hold = hold

    async def take(self, deadline: float) -> bool:
        watch = self._watch
        if not watch.running:
            return False
        try:
            async with asyncio.timeout(max(deadline - self._timer.monotonic(), 0.001)):
                acquired, _ = await watch.until(self._limiter.acquire(self._lane))
        except TimeoutError:
            return False
        return acquired

    async def hold(self, error: ProviderUnavailable) -> float:
        hold = error.retry_after if error.retry_after is not None else self._hold
        await self._limiter.hold(self._lane, hold)
        log.info("campaign_lane_held", extra={"lane": self._lane, "seconds": hold})
        return hold

    async def wait(self, seconds: float) -> bool:
        watch = self._watch
        return await watch.check() and await watch.sleep(seconds)


class CampaignBatches:
    """``budget``: the seconds a batch may take in all (its retry deadline, at most half
    its lease)."""

    def __init__(
        self,
        recipients: RecipientRepository,
        leads: LeadRepository,
        messages: MessageRepository,
        outgoing: Outgoing,
        policy: SendPolicy,
        limiter: RateLimiter,
        lane: str,
        settings: CampaignSettings,
        clock: Clock,
        links: Unsubscribes,
        quota: SendQuota,
        pause_for_quota: Callable[[Campaign, datetime], Awaitable[bool]],
    ) -> None:
        """``pause_for_quota``: what a batch its account's quota refuses does to its
        campaign (CampaignService.pause_for_quota)."""
        self._recipients = recipients
        self._leads = leads
        self._messages = messages
        self._outgoing = outgoing
        self._policy = policy
        self._limiter = limiter
        self._lane = lane
        self._hold = settings.hold
        self._budget = min(settings.retry.deadline, settings.lease.total_seconds() / 2)
        self._clock = clock
        self._links = links
        self._quota = quota
        self._pause_for_quota = pause_for_quota

    async def ready(self, watch: CampaignWatch) -> bool:
        """Whether to lease a batch now: once no hold is on the lane (a batch leased
        during a 429's hold would only wait); False when the campaign stops first."""
        return (await watch.until(self._limiter.unheld(self._lane)))[0]

    async def refused_sender(self, letter: Letter) -> str | None:
        """Why the campaign may no longer send from its sender (its account's sender
        domains changed since it was created), or None: asked before each batch is leased
        (a dict lookup while the account's domains are cached)."""
        campaign = letter.campaign
        try:
            await self._policy.allow(campaign.account_id, letter.sender, letter.reply_to)
        except SenderNotAllowed as e:
            return e.message
        return None

    async def send(self, letter: Letter, batch: LeasedBatch, watch: CampaignWatch) -> None:
        """Send ``batch`` and record its outcomes."""
        if not watch.running:  # stopped since the lease: nothing was sent
            await self._recipients.release(batch, self._clock())
            return
        campaign = letter.campaign
        account_id = campaign.account_id
        ids = [r.lead_id for r in batch.recipients]
        leads = await self._leads.get_many(account_id, ids)
        links = self._links
        await links.ready()
        skipped: list[RecipientOutcome] = []
        items: list[BatchItem] = []
        lead_of: dict[str, str] = {}
        for n, recipient in enumerate(batch.recipients, 1):
            if n % RENDER_SLICE == 0:  # let requests served by this process go meanwhile
                await asyncio.sleep(0)
            lead = leads.get(recipient.lead_id)
            # Every campaign message carries its recipient's own unsubscribe link.
            try:
                link = links.url(account_id, recipient.email) if lead is not None else ""
            except ValidationFailed as e:  # not an address (never stored so): not sent
                skipped.append(RecipientOutcome(recipient.lead_id, _S.SKIPPED, e.described))
                continue
            rendered = render_for(letter, recipient, lead, link)
            if isinstance(rendered, str):
                skipped.append(RecipientOutcome(recipient.lead_id, _S.SKIPPED, rendered))
                continue
            assert recipient.message_id is not None  # given by the lease
            items.append(BatchItem(rendered, recipient.message_id))
            lead_of[recipient.message_id] = recipient.lead_id
        if items:  # the send policy, in one lookup: a suppressed recipient is never sent
            barred = await self._policy.suppressed(
                campaign.account_id, [item.email.to[0].address for item in items]
            )
            if barred:  # (a retried batch too: what it no longer holds is not sent again)
                kept: list[BatchItem] = []
                for item in items:
                    entry = barred.get(email_key(item.email.to[0].address))
                    if entry is None:
                        kept.append(item)
                        continue
                    lead_id = lead_of.pop(item.message_id)
                    skipped.append(RecipientOutcome(lead_id, _S.SUPPRESSED, entry.why()))
                items = kept
        if skipped:
            await self._recipients.record(batch, skipped, self._clock())
        if not items:
            return
        taken = NOTHING
        if not batch.retried:  # (a retried batch was counted by its first try)
            try:
                taken = await self._quota.take(account_id, len(items))
            except QuotaExceeded as e:  # nothing sent: the campaign waits for tomorrow
                await self._recipients.release(batch, self._clock())
                if await self._pause_for_quota(campaign, e.reset_at):
                    log.info(
                        "campaign_paused_by_quota",
                        extra={"campaign_id": campaign.campaign_id, "quota": e.quota},
                    )
                return
        outgoing = self._outgoing
        stored: dict[str, Message] | None = None
        if batch.retried:  # its messages were recorded by its first try
            found = await self._messages.get_many(campaign.account_id, list(lead_of))
            stored = {m.message_id: m for m in found}
        messages = await outgoing.record(
            campaign.account_id, items, campaign.template_id, stored,
            template_version=letter.template.version, campaign_id=campaign.campaign_id,
        )  # fmt: skip
        pace = LanePace(self._limiter, self._lane, watch, outgoing.timer, self._hold)
        delivered = await outgoing.attempt(
            account_id,
            items,
            batch.batch_id,
            pace,
            outgoing.deadline(self._budget),
            retried=batch.retried,
        )
        now = self._clock()
        outcomes: list[RecipientOutcome] = []
        changed: list[Message] = []
        if delivered.results is not None:
            for result in delivered.results:
                message, failure = outgoing.settled(messages[result.message_id], delivered, result)
                lead_id = lead_of[result.message_id]
                changed.append(message)
                if failure is None:
                    outcomes.append(RecipientOutcome(lead_id, _S.SENT))
                else:
                    outcomes.append(RecipientOutcome(lead_id, _S.FAILED, failure.message))
        elif delivered.landed_before is not None:
            refused = delivered.landed_before
            error = LANDED_BEFORE.format(f"{refused.status}: {refused.detail}")
            outcomes = [RecipientOutcome(lead_of[i.message_id], _S.UNKNOWN, error) for i in items]
        elif delivered.error is not None:
            error = delivered.error.message
            for item in items:
                changed.append(outgoing.settled(messages[item.message_id], delivered, None)[0])
                outcomes.append(RecipientOutcome(lead_of[item.message_id], _S.FAILED, error))
        elif delivered.may_have_landed:  # its lease decides: retried with its key, or unknown
            log.info(
                "campaign_batch_left",
                extra={"batch_id": batch.batch_id, "campaign_id": batch.campaign_id},
            )
            return
        else:  # nothing was delivered: its recipients go in other batches
            await self._recipients.release(batch, now)
            await self._quota.give_back(account_id, taken)  # (counted again when sent)
            if not batch.retried:
                attempts = delivered.attempts
                await outgoing.store(
                    [m.failed(HANDED_BACK, m.attempts + attempts, now) for m in messages.values()]
                )
            return
        written = await self._recipients.record(batch, outcomes, now)
        await outgoing.store(changed)
        if written < len(outcomes):  # its lease ended and the batch was leased again
            log.warning(
                "campaign_batch_taken_over",
                extra={
                    "batch_id": batch.batch_id,
                    "campaign_id": batch.campaign_id,
                    "recorded": written,
                    "outcomes": len(outcomes),
                },
            )
