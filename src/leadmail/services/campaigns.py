"""Campaigns managed: created (checked, then started unless a draft), started (the audience
frozen), paused, resumed, cancelled, shown with their counts and pace, listed, and their
recipients paged. The sending is the job CAMPAIGN_JOB, queued here and run by a worker."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.campaigns import (
    PAUSED_QUOTA,
    RATE_WINDOW,
    Campaign,
    CampaignCounts,
    CampaignNotFound,
    CampaignStateConflict,
    CampaignStatus,
    RecipientStatus,
    eta_seconds,
    rate_per_minute,
)
from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.quotas import next_day_start
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.ports.jobs import JobQueue
from leadmail.services.campaign_checks import CampaignChecks, CampaignEdit, CampaignRequest
from leadmail.services.quotas import SendQuota

T = TypeVar("T")
CAMPAIGN_JOB = "campaign.send"  # payload: the campaign id (and a seat: campaign_runner.py)
QUOTA_RESUME_JOB = "campaign.quota_resume"  # payload: the campaign id; at the next UTC day
RECIPIENT_CURSOR = re.compile(r"^[A-Za-z0-9_-]{1,40}$")  # a lead id: the last one shown
EARLY_BY_AT_MOST = timedelta(minutes=1)  # a job that came early waits for send_at
_TRIES = 5  # of a transition that lost a race with another


@dataclass(frozen=True, slots=True)
class CampaignView:
    """A campaign as shown: its recipients' counts (before the start, every lead the
    audience matches now is pending), recipients sent per minute lately, and the seconds
    left at that pace while it runs."""

    campaign: Campaign
    counts: CampaignCounts
    rate_per_minute: int
    eta_seconds: int | None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: Sequence[T]
    next_cursor: str | None


class CampaignService:
    def __init__(
        self,
        campaigns: CampaignRepository,
        recipients: RecipientRepository,
        checks: CampaignChecks,
        jobs: JobQueue,
        quota: SendQuota,
        clock: Clock = utc_now,
    ) -> None:
        self._campaigns = campaigns
        self._recipients = recipients
        self._checks = checks
        self._jobs = jobs
        self._quota = quota
        self._clock = clock

    async def create(self, account_id: str, request: CampaignRequest) -> CampaignView:
        """Checked (nothing stored or queued when a check fails), stored, and started
        unless ``request.draft``."""
        draft = self._checks.campaign_of(account_id, request, self._clock())
        required = await self._checks.against_data(draft)
        await self._campaigns.add(draft)
        if request.draft:
            return await self._view(draft)
        return await self._view(await self._start(draft, required))

    async def start(self, account_id: str, campaign_id: str) -> CampaignView:
        """A draft's checks again, its audience frozen, then running (or scheduled)."""
        campaign = await self._get(account_id, campaign_id)
        campaign.start(self._clock())  # CampaignStateConflict before any check
        required = await self._checks.against_data(campaign)
        return await self._view(await self._start(campaign, required))

    async def pause(self, account_id: str, campaign_id: str) -> CampaignView:
        return await self._view(await self._change(account_id, campaign_id, "pause"))

    async def resume(self, account_id: str, campaign_id: str) -> CampaignView:
        """Running (or scheduled) again; QuotaExceeded, nothing changed, while the
        account's daily quota is used up (a campaign paused by it resumes by itself when
        the next UTC day begins)."""
        current = await self._get(account_id, campaign_id)
        current.check("resume")  # CampaignStateConflict first
        exceeded = await self._quota.exceeded(account_id)
        if exceeded is None and current.paused_reason == PAUSED_QUOTA:
            # Paused today by the quota: its next batch did not fit what is left.
            exceeded = await self._quota.exceeded(account_id, since=current.updated_at)
        if exceeded is not None:
            raise exceeded
        resumed = await self._change(account_id, campaign_id, "resume")
        await self._enqueue(resumed)
        return await self._view(resumed)

    async def pause_for_quota(self, campaign: Campaign, reset_at: datetime) -> bool:
        """A running campaign its account's daily quota stopped: paused (reason
        ``quota``), and queued to resume at ``reset_at`` (the next UTC day). False when it
        was not running any more (paused, cancelled meanwhile: left as it is)."""
        paused = await self._campaigns.save(
            campaign.pause(self._clock(), PAUSED_QUOTA), CampaignStatus.RUNNING
        )
        if paused is None:
            return False
        await self._jobs.enqueue(QUOTA_RESUME_JOB, campaign.campaign_id, run_at=reset_at)
        return True

    async def resume_after_quota(self, campaign_id: str) -> None:
        """QUOTA_RESUME_JOB's handler: a campaign still paused by its quota runs again
        (paused by a client since, or cancelled: left as it is)."""
        campaign = await self._campaigns.find(campaign_id)
        if campaign is None or campaign.status is not CampaignStatus.PAUSED:
            return
        if campaign.paused_reason != PAUSED_QUOTA:
            return
        if await self._quota.exceeded(campaign.account_id) is not None:  # a clock behind
            reset_at = next_day_start(self._clock())
            await self._jobs.enqueue(QUOTA_RESUME_JOB, campaign_id, run_at=reset_at)
            return
        resumed = await self._campaigns.save(campaign.resume(self._clock()), CampaignStatus.PAUSED)
        if resumed is not None:
            await self._enqueue(resumed)

    async def cancel(self, account_id: str, campaign_id: str) -> CampaignView:
        """Cancelled; its pending recipients too (batches being sent finish)."""
        cancelled = await self._change(account_id, campaign_id, "cancel")
        await self._recipients.cancel_pending(campaign_id, self._clock())
        return await self._view(cancelled)

    async def edit(self, account_id: str, campaign_id: str, edit: CampaignEdit) -> CampaignView:
        """A draft or scheduled campaign's body changed, with the checks of a creation
        (nothing changed when one fails). A draft stays a draft; a scheduled campaign goes
        back to draft, forgets its frozen recipients, and starts again: scheduled while
        its ``send_at`` is ahead, else running at once."""
        current = await self._get(account_id, campaign_id)
        current.check("edit")  # CampaignStateConflict before any check of the body
        now = self._clock()
        edited = current.edit(self._checks.campaign_of(account_id, edit.over(current), now), now)
        required = await self._checks.against_data(edited)
        saved = await self._campaigns.rewrite(edited, current.status)
        if saved is None:  # started, paused or cancelled meanwhile
            latest = await self._get(account_id, campaign_id)
            raise CampaignStateConflict(campaign_id, latest.status, "edit")
        if current.status is CampaignStatus.DRAFT:
            return await self._view(saved)
        # Never a recipient being sent: a scheduled campaign has none, and forget
        # leaves any a worker holds (a start racing this edit) where it is.
        await self._recipients.forget(campaign_id)
        return await self._view(await self._start(saved, required))

    async def delete(self, account_id: str, campaign_id: str) -> None:
        """A draft removed; a campaign that has started is history (CampaignStateConflict)."""
        current = await self._get(account_id, campaign_id)
        current.check("delete")
        if not await self._campaigns.remove(current, CampaignStatus.DRAFT):
            latest = await self._get(account_id, campaign_id)
            raise CampaignStateConflict(campaign_id, latest.status, "delete")

    async def get(self, account_id: str, campaign_id: str) -> CampaignView:
        return await self._view(await self._get(account_id, campaign_id))

    async def list(
        self, account_id: str, limit: int, cursor: str | None = None
    ) -> Page[CampaignView]:
        """Newest first; the cursor is that of GET /api/v1/leads (time and id)."""
        after = None if cursor is None else PageCursor.decode(cursor)
        found = await self._campaigns.list(account_id, limit, after)
        shown = found[:limit]
        # One grouped count for the page's campaigns, not one per campaign.
        counts = await self._recipients.counts_of([c.campaign_id for c in shown if c.status.frozen])
        views = [await self._view(c, counts.get(c.campaign_id, CampaignCounts())) for c in shown]
        if len(found) <= limit:
            return Page(views, None)
        last = found[limit - 1]
        return Page(views, PageCursor(last.created_at, last.campaign_id).encode())

    async def recipients(
        self,
        account_id: str,
        campaign_id: str,
        status: RecipientStatus | None,
        limit: int,
        cursor: str | None = None,
    ) -> Page[Recipient]:
        """In lead id order; the cursor is the last lead id shown (a draft has none)."""
        if cursor is not None and not RECIPIENT_CURSOR.fullmatch(cursor):
            raise ValidationFailed.one("cursor", "is not a cursor this service issued")
        await self._get(account_id, campaign_id)
        found = await self._recipients.page(campaign_id, status, limit, cursor)
        if len(found) <= limit:
            return Page(found, None)
        return Page(found[:limit], found[limit - 1].lead_id)

    async def requeue_active(self) -> int:
        """Queue the job of every running or scheduled campaign again (a server starting:
        the in-process queue kept nothing; on Postgres a job still queued is not doubled).
        Returns how many."""
        active = await self._campaigns.active()
        for campaign in active:
            await self._enqueue(campaign)
        return len(active)

    async def find(self, campaign_id: str) -> CampaignView:
        """A campaign of any account, by its id (unique across accounts): for the command
        line, never for a client's request."""
        found = await self._campaigns.find(campaign_id)
        if found is None:
            raise CampaignNotFound(campaign_id)
        return await self._view(found)

    async def begin_when_due(self, campaign_id: str) -> None:
        """A scheduled campaign whose ``send_at`` has come starts running (the issue's
        "scheduled -> running at send_at"); the first step of CAMPAIGN_JOB's handler
        (services/campaign_runner.py)."""
        campaign = await self._campaigns.find(campaign_id)
        if campaign is None or campaign.status is not CampaignStatus.SCHEDULED:
            return
        assert campaign.send_at is not None  # scheduled: its send_at was ahead
        early = campaign.send_at - self._clock()
        if early > EARLY_BY_AT_MOST:  # queued again at its time (a queue that kept none)
            await self._enqueue(campaign)
            return
        if early > timedelta(0):  # clocks apart by a little
            await asyncio.sleep(early.total_seconds())
        await self._campaigns.save(campaign.begin(self._clock()), CampaignStatus.SCHEDULED)

    # Helpers.

    async def _get(self, account_id: str, campaign_id: str) -> Campaign:
        found = await self._campaigns.get(account_id, campaign_id)
        if found is None:
            raise CampaignNotFound(campaign_id)
        return found

    async def _start(self, draft: Campaign, required: Sequence[str]) -> Campaign:
        started = await self._checks.frozen(draft.start(self._clock()))
        await self._recipients.freeze(started, required)
        saved = await self._campaigns.save(started, CampaignStatus.DRAFT)
        if saved is None:  # changed meanwhile: started by another request, or cancelled
            current = await self._get(draft.account_id, draft.campaign_id)
            if current.status is CampaignStatus.CANCELLED:
                await self._recipients.cancel_pending(draft.campaign_id, self._clock())
            raise CampaignStateConflict(draft.campaign_id, current.status, "start")
        await self._enqueue(saved)
        return saved

    async def _change(self, account_id: str, campaign_id: str, action: str) -> Campaign:
        """The action applied to the campaign as stored (CampaignStateConflict when it
        does not apply), saved unless another change landed first: then again."""
        for _ in range(_TRIES):
            current = await self._get(account_id, campaign_id)
            changed: Campaign = getattr(current, action)(self._clock())
            saved = await self._campaigns.save(changed, current.status)
            if saved is not None:
                return saved
        raise CampaignStateConflict(campaign_id, current.status, action)

    async def _enqueue(self, campaign: Campaign) -> None:
        if campaign.status is CampaignStatus.RUNNING:
            await self._jobs.enqueue(CAMPAIGN_JOB, campaign.campaign_id)
        elif campaign.status is CampaignStatus.SCHEDULED:
            await self._jobs.enqueue(CAMPAIGN_JOB, campaign.campaign_id, run_at=campaign.send_at)

    async def _view(self, campaign: Campaign, known: CampaignCounts | None = None) -> CampaignView:
        """``known``: its counts, when counted already (a page of campaigns)."""
        now = self._clock()
        if not campaign.status.frozen:  # a draft: the leads the audience matches now
            counts = CampaignCounts(pending=await self._checks.matching(campaign))
            return CampaignView(campaign, counts, 0, None)
        counts = known if known is not None else await self._recipients.counts(campaign.campaign_id)
        rate = 0
        if campaign.status is CampaignStatus.RUNNING and campaign.started_at is not None:
            window = min(RATE_WINDOW, now - campaign.started_at)
            sent = await self._recipients.sent_since(campaign.campaign_id, now - window)
            rate = rate_per_minute(sent, window)
        return CampaignView(
            campaign, counts, rate, eta_seconds(campaign.status, counts.pending, rate)
        )
