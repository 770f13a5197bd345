"""The campaign runner: CAMPAIGN_JOB's handler, which sends a running campaign to its end.

How the work is shared: a lease takes a batch of recipients for one worker (Postgres: FOR
UPDATE SKIP LOCKED), so any number of processes may send one campaign at once without
sending anyone twice. A process sends a campaign in ONE loop, with up to ``in_flight``
batches at the provider (a second job for it only wakes that loop). The campaign's job
wakes the first worker at once (at ``send_at`` when scheduled), and every worker joins the
running campaigns it does not send every JOIN_EVERY_S s (``keep_joining``): every worker
shares every running campaign, and one whose worker died goes on without waiting for the
queue to notice. Each provider request's rate is acquired from the shared limiter right
before it is made (campaign_batches.py), so the rate holds at the provider however many
processes send.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from leadmail.domain.campaign_recipients import Letter
from leadmail.domain.campaigns import Campaign, CampaignStatus
from leadmail.domain.clock import Clock
from leadmail.domain.errors import TemplateNotFound
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.services.campaign_batches import CampaignBatches, CampaignSettings
from leadmail.services.campaign_watch import CampaignWatch
from leadmail.services.outgoing import Timer
from leadmail.services.templates import TemplateService

log = logging.getLogger("leadmail.campaigns")
JOIN_EVERY_S = 2.0  # how often a worker looks for running campaigns to join
RETRY_AFTER_ERROR_S = 2.0  # a loop stopped by an error starts again after this
TEMPLATE_GONE = "the template {!r} no longer exists"
_ENDED = (CampaignStatus.CANCELLED, CampaignStatus.FAILED)


class CampaignRunner:
    def __init__(
        self,
        campaigns: CampaignRepository,
        recipients: RecipientRepository,
        templates: TemplateService,
        batches: CampaignBatches,
        settings: CampaignSettings,
        clock: Clock,
        timer: Timer,
        *,
        begin: Callable[[str], Awaitable[None]],
        retryable: bool,
    ) -> None:
        """``begin``: a scheduled campaign to running when its time has come;
        ``retryable``: the provider keeps idempotency (an expired batch is sent again with
        its key, else its recipients become ``unknown``)."""
        self._campaigns = campaigns
        self._recipients = recipients
        self._templates = templates
        self._batches = batches
        self._settings = settings
        self._clock = clock
        self._timer = timer
        self._begin = begin
        self._retryable = retryable
        self._sending: set[str] = set()  # campaigns this process sends now
        self._again: set[str] = set()  # ... and that a job asked for meanwhile
        self._stopping = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()

    async def run_job(self, payload: str) -> None:
        """CAMPAIGN_JOB's handler; its payload is the campaign's id."""
        campaign_id = payload
        if self._stopping.is_set():
            return
        await self._begin(campaign_id)  # scheduled -> running, at its time
        await self._join(campaign_id)

    async def keep_joining(self, every: float = JOIN_EVERY_S) -> None:
        """Until stopped: every ``every`` s, join the running campaigns this process does
        not send (another worker's, or one whose worker died)."""
        joined: set[asyncio.Task[None]] = set()
        try:
            while not self._stopping.is_set():
                await asyncio.sleep(every)
                try:
                    running = [c for c in await self._campaigns.active()
                               if c.status is CampaignStatus.RUNNING]  # fmt: skip
                except Exception as e:
                    log.warning("campaigns_unread", extra={"error_type": type(e).__name__})
                    continue
                for campaign in running:
                    if campaign.campaign_id not in self._sending and not self._stopping.is_set():
                        task = asyncio.create_task(self._join(campaign.campaign_id))
                        joined.add(task)
                        task.add_done_callback(joined.discard)
        finally:
            await asyncio.gather(*joined, return_exceptions=True)

    async def _join(self, campaign_id: str) -> None:
        """Send the campaign in this process's one loop for it."""
        if self._stopping.is_set():
            return
        if campaign_id in self._sending:  # this process's loop sends it: look again after
            self._again.add(campaign_id)
            return
        self._sending.add(campaign_id)
        self._idle.clear()
        try:
            while not self._stopping.is_set():
                try:
                    await self._send(campaign_id)
                except Exception as e:  # the database away, say: try again in a while
                    log.error(
                        "campaign_send_error",
                        extra={
                            "campaign_id": campaign_id,
                            "error_type": type(e).__name__,
                            "error": str(e),
                        },
                    )
                    await asyncio.sleep(RETRY_AFTER_ERROR_S)
                    continue
                if campaign_id not in self._again:
                    break
                self._again.discard(campaign_id)
        finally:
            self._sending.discard(campaign_id)
            self._again.discard(campaign_id)
            if not self._sending:
                self._idle.set()

    async def stop(self, wait_s: float) -> bool:
        """No new batch from now on; wait up to ``wait_s`` s for the batches at the
        provider to be answered and recorded. Whether every loop ended in time."""
        self._stopping.set()
        try:
            async with asyncio.timeout(wait_s):
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    async def _send(self, campaign_id: str) -> None:
        campaign = await self._campaigns.find(campaign_id)
        if campaign is None or campaign.status is not CampaignStatus.RUNNING:
            return
        try:
            if campaign.template_version is None:  # started before templates had versions
                template = await self._templates.sendable(campaign.account_id, campaign.template_id)
            else:
                template = await self._templates.sendable_version(
                    campaign.account_id,
                    campaign.template_id,
                    campaign.template_version,
                    campaign.layout_version,
                )
        except TemplateNotFound as gone:  # the template (or its frozen layout) was deleted
            await self._fail(campaign, TEMPLATE_GONE.format(gone.template_id))
            return
        letter = Letter.of(campaign, template)
        watch = CampaignWatch(
            self._campaigns, campaign_id, interval=self._settings.poll, timer=self._timer,
            stopping=self._stopping,
        )  # fmt: skip
        log.info("campaign_sending", extra={"campaign_id": campaign_id})
        async with watch:
            await self._loop(letter, watch)
        found = await self._campaigns.find(campaign_id)
        if found is not None and found.status in _ENDED:  # batches released since
            failure = found.failure_reason if found.status is CampaignStatus.FAILED else ""
            await self._recipients.cancel_pending(campaign_id, self._clock(), failure=failure)

    async def _loop(self, letter: Letter, watch: CampaignWatch) -> None:
        campaign_id = letter.campaign.campaign_id
        settings, timer = self._settings, self._timer
        slots = asyncio.Semaphore(settings.in_flight)
        in_flight: set[asyncio.Task[None]] = set()
        expire_every = max(settings.lease.total_seconds() / 4, settings.poll)
        next_expiry = timer.monotonic()
        try:
            while watch.running:
                if timer.monotonic() >= next_expiry:
                    next_expiry = timer.monotonic() + expire_every
                    await self._expire(campaign_id)
                await slots.acquire()
                if not await self._batches.ready(watch):  # stopped during a hold
                    slots.release()
                    break
                refused = await self._batches.refused_sender(letter)
                if refused is not None:  # the rest is not sent: the campaign fails
                    slots.release()
                    await self._fail(letter.campaign, refused)
                    break
                now = self._clock()
                batch = await self._recipients.lease(
                    campaign_id, settings.batch, now=now, lease_until=now + settings.lease
                )
                if batch is None:
                    slots.release()
                    if in_flight:  # ours may yet be handed back
                        await asyncio.wait(in_flight, timeout=settings.poll)
                        continue
                    await self._expire(campaign_id)
                    if (await self._recipients.counts(campaign_id)).pending == 0:
                        await self._finish(campaign_id)
                        return
                    await watch.sleep(settings.poll)  # other workers' batches, or leases
                    continue
                task = asyncio.create_task(self._batches.send(letter, batch, watch))
                in_flight.add(task)
                task.add_done_callback(lambda done: _finished(done, in_flight, slots))
        finally:
            if in_flight:  # answered and recorded before the loop ends
                await asyncio.gather(*in_flight, return_exceptions=True)

    async def _expire(self, campaign_id: str) -> None:
        expired = await self._recipients.expire(
            campaign_id, self._clock(), retryable=self._retryable
        )
        if expired:
            found = {"campaign_id": campaign_id, "recipients": expired, "retried": self._retryable}
            log.warning("campaign_leases_expired", extra=found)

    async def _finish(self, campaign_id: str) -> None:
        campaign = await self._campaigns.find(campaign_id)
        if campaign is not None and campaign.status is CampaignStatus.RUNNING:
            done = await self._campaigns.save(
                campaign.finish(self._clock()), CampaignStatus.RUNNING
            )
            if done is not None:
                log.info("campaign_done", extra={"campaign_id": campaign_id})

    async def _fail(self, campaign: Campaign, reason: str) -> None:
        failed = await self._campaigns.save(campaign.fail(self._clock(), reason), campaign.status)
        if failed is not None:  # the recipients left: cancelled, with the reason
            campaign_id = campaign.campaign_id
            await self._recipients.cancel_pending(campaign_id, self._clock(), failure=reason)
            log.error("campaign_failed", extra={"campaign_id": campaign_id, "reason": reason})


def _finished(
    task: asyncio.Task[None], in_flight: set[asyncio.Task[None]], slots: asyncio.Semaphore
) -> None:
    in_flight.discard(task)
    slots.release()
    if not task.cancelled() and (error := task.exception()) is not None:
        # Its recipients stay `sending` until their lease ends (retried or unknown).
        log.error(
            "campaign_batch_error", extra={"error_type": type(error).__name__, "error": str(error)}
        )
