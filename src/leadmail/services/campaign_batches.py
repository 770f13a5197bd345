"""One batch of a campaign, claimed by this worker, sent: each recipient's message rendered
(or the recipient skipped), the messages stored pending before the provider is called,
one provider request for the batch (its batch id as the Idempotency-Key, kept by a
retry), retried with backoff, and what became of each recipient recorded on it and on
its message.

A failure that the provider answered (429, 5xx) delivered nothing: a batch given up
after one (stopped, or a 429 that outlasts the batch's time) is released, its recipients
pending again. After a failure without an answer (a timeout, a cut connection) the batch
may have landed: it is left as it is, and when its lease ends another claim retries it
with the same key (a provider that keeps idempotency) or marks it ``unknown``; a retry
refused (409) for its key, an earlier try having landed, leaves it ``unknown`` too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from leadmail.domain.campaign_recipients import (
    LANDED_BEFORE,
    ClaimedBatch,
    Letter,
    RecipientOutcome,
    render_for,
)
from leadmail.domain.campaigns import RecipientStatus
from leadmail.domain.clock import Clock
from leadmail.domain.delivery import (
    BatchItem,
    RetryPolicy,
)
from leadmail.domain.email import Message
from leadmail.ports.campaigns import RecipientRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.mail import EmailProvider
from leadmail.ports.messages import MessageRepository
from leadmail.ports.rate_limits import RateLimiter
from leadmail.services.batch_attempts import BatchAttempts
from leadmail.services.campaign_watch import CampaignWatch
from leadmail.services.delivery import Timer

log = logging.getLogger("leadmail.campaigns")
_S = RecipientStatus
RENDER_SLICE = 50  # messages rendered between two yields to the event loop
HANDED_BACK = "not sent: its recipient was handed back to the campaign, to go in another message"


@dataclass(frozen=True, slots=True)
class SenderSettings:
    """``batch``: recipients per provider request; ``in_flight``: batches one process has
    at the provider at once per campaign; ``poll``: how often the campaign's status is
    read while it runs; ``hold``: how long a 429 without Retry-After holds the lane."""

    lease: timedelta = timedelta(seconds=60)
    batch: int = 1
    in_flight: int = 4
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    poll: float = 0.5
    hold: float = 1.0


class BatchSender:
    def __init__(
        self,
        recipients: RecipientRepository,
        leads: LeadRepository,
        messages: MessageRepository,
        provider: EmailProvider,
        limiter: RateLimiter,
        lane: str,
        settings: SenderSettings,
        clock: Clock,
        timer: Timer,
    ) -> None:
        self._recipients = recipients
        self._leads = leads
        self._messages = messages
        self._provider = provider
        budget = min(settings.retry.deadline, settings.lease.total_seconds() / 2)
        self._attempts = BatchAttempts(
            provider, limiter, lane, settings.retry, timer, budget=budget, hold=settings.hold
        )
        self._clock = clock

    async def ready(self, watch: CampaignWatch) -> bool:
        """Whether to claim a batch now: once no hold is on the lane (a batch claimed
        during a 429's hold would only wait); False when the campaign stops first."""
        return await self._attempts.unheld(watch)

    async def send(self, letter: Letter, batch: ClaimedBatch, watch: CampaignWatch) -> None:
        """Send ``batch`` and record its outcomes."""
        if not watch.running:  # stopped since the claim: nothing was sent
            await self._recipients.release(batch, self._clock())
            return
        campaign = letter.campaign
        ids = [r.lead_id for r in batch.recipients]
        leads = await self._leads.get_many(campaign.account_id, ids)
        skipped: list[RecipientOutcome] = []
        items: list[BatchItem] = []
        lead_of: dict[str, str] = {}
        for n, recipient in enumerate(batch.recipients, 1):
            if n % RENDER_SLICE == 0:  # let requests served by this process go meanwhile
                await asyncio.sleep(0)
            rendered = render_for(letter, recipient, leads.get(recipient.lead_id))
            if isinstance(rendered, str):
                skipped.append(RecipientOutcome(recipient.lead_id, _S.SKIPPED, rendered))
                continue
            assert recipient.message_id is not None  # given by the claim
            items.append(BatchItem(rendered, recipient.message_id))
            lead_of[recipient.message_id] = recipient.lead_id
        if skipped:
            await self._recipients.record(batch, skipped, self._clock())
        if not items:
            return
        messages = await self._stored(letter, batch, items)
        delivered = await self._attempts.deliver(items, batch, watch)
        now = self._clock()
        outcomes: list[RecipientOutcome] = []
        changed: list[Message] = []
        if delivered.results is not None:
            for result in delivered.results:
                message = messages[result.message_id]
                lead_id = lead_of[result.message_id]
                if result.error is None:
                    outcomes.append(RecipientOutcome(lead_id, _S.SENT))
                    changed.append(
                        message.sent(result.provider_message_id, delivered.attempts, now)
                    )
                else:
                    outcomes.append(RecipientOutcome(lead_id, _S.FAILED, result.error.message))
                    changed.append(message.failed(result.error.message, delivered.attempts, now))
        elif delivered.landed_before is not None:
            refused = delivered.landed_before
            error = LANDED_BEFORE.format(f"{refused.status}: {refused.detail}")
            outcomes = [RecipientOutcome(lead_of[i.message_id], _S.UNKNOWN, error) for i in items]
        elif delivered.error is not None:
            error = delivered.error.message
            outcomes = [RecipientOutcome(lead_of[i.message_id], _S.FAILED, error) for i in items]
            changed = [messages[i.message_id].failed(error, delivered.attempts, now) for i in items]
        elif delivered.may_have_landed:  # its lease decides: retried with its key, or unknown
            log.info(
                "campaign_batch_left",
                extra={"batch_id": batch.batch_id, "campaign_id": batch.campaign_id},
            )
            return
        else:  # nothing was delivered: its recipients go in other batches
            await self._recipients.release(batch, now)
            if not batch.retried:
                changed = [
                    m.failed(HANDED_BACK, delivered.attempts, now) for m in messages.values()
                ]
                await self._messages.update(changed)
            return
        written = await self._recipients.record(batch, outcomes, now)
        await self._messages.update(changed)
        if written < len(outcomes):  # its lease ended and the batch was taken over
            log.warning(
                "campaign_batch_taken_over",
                extra={
                    "batch_id": batch.batch_id,
                    "campaign_id": batch.campaign_id,
                    "recorded": written,
                    "outcomes": len(outcomes),
                },
            )

    async def _stored(
        self, letter: Letter, batch: ClaimedBatch, items: Sequence[BatchItem]
    ) -> dict[str, Message]:
        """The batch's messages, stored pending before the provider is called (a retried
        batch's are stored already: only any missing are added)."""
        campaign = letter.campaign
        ids = [item.message_id for item in items]
        found: dict[str, Message] = {}
        if batch.retried:
            stored = await self._messages.get_many(campaign.account_id, ids)
            found = {m.message_id: m for m in stored}
        now = self._clock()
        account, template, provider = campaign.account_id, campaign.template_id, self._provider.name
        new = [
            Message.pending(item.message_id, account, item.email, template, provider, now)
            for item in items
            if item.message_id not in found
        ]
        if new:
            await self._messages.add(new)
        return {**found, **{m.message_id: m for m in new}}
