"""Campaigns and their recipients in dicts: one process, and no await inside a change, so
each method is atomic by itself (as one SQL statement or transaction is)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.campaign_recipients import (
    STOPPED,
    LeasedBatch,
    Recipient,
    RecipientOutcome,
    lacks_variable,
    new_batch_id,
    new_lease_id,
    stopped_errors,
)
from leadmail.domain.campaigns import Campaign, CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.email import new_message_id
from leadmail.domain.lead_listing import PageCursor
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository

_PENDING, _SENDING = RecipientStatus.PENDING, RecipientStatus.SENDING
_FORGOTTEN = (_PENDING, RecipientStatus.SKIPPED)  # forget: what a freeze wrote


class MemoryCampaignRepository(CampaignRepository):
    def __init__(self) -> None:
        self._campaigns: dict[str, Campaign] = {}
        self._forgotten: list[Callable[[str], object]] = []

    async def add(self, campaign: Campaign) -> None:
        self._campaigns[campaign.campaign_id] = campaign

    async def get(self, account_id: str, campaign_id: str) -> Campaign | None:
        found = self._campaigns.get(campaign_id)
        return found if found is not None and found.account_id == account_id else None

    async def find(self, campaign_id: str) -> Campaign | None:
        return self._campaigns.get(campaign_id)

    async def save(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        stored = self._campaigns.get(campaign.campaign_id)
        if stored is None or stored.status is not expected:
            return None
        # What a transition changes (as the SQL store's UPDATE): the body stays as stored.
        changed = replace(
            stored,
            status=campaign.status,
            failure_reason=campaign.failure_reason,
            updated_at=campaign.updated_at,
            started_at=campaign.started_at,
            finished_at=campaign.finished_at,
            template_version=campaign.template_version,
            layout_id=campaign.layout_id,
            layout_version=campaign.layout_version,
            paused_reason=campaign.paused_reason,
        )
        self._campaigns[campaign.campaign_id] = changed
        return changed

    async def rewrite(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        stored = self._campaigns.get(campaign.campaign_id)
        if stored is None or stored.status is not expected:
            return None
        self._campaigns[campaign.campaign_id] = campaign
        return campaign

    async def remove(self, campaign: Campaign, expected: CampaignStatus) -> bool:
        stored = self._campaigns.get(campaign.campaign_id)
        if stored is None or stored.status is not expected:
            return False
        del self._campaigns[campaign.campaign_id]
        for forgotten in self._forgotten:
            forgotten(campaign.campaign_id)
        return True

    def on_remove(self, forget: Callable[[str], object]) -> None:
        """``forget(campaign_id)`` after a campaign is removed (its recipients go with it,
        as the foreign key's cascade does in SQL)."""
        self._forgotten.append(forget)

    async def active(self) -> list[Campaign]:
        waiting = (CampaignStatus.RUNNING, CampaignStatus.SCHEDULED)
        return sorted(
            (c for c in self._campaigns.values() if c.status in waiting),
            key=lambda c: (c.created_at, c.campaign_id),
        )

    async def using(self, account_id: str, template_id: str) -> list[str]:
        found = sorted(
            (c.created_at, c.campaign_id)
            for c in self._campaigns.values()
            if c.account_id == account_id
            and template_id in (c.template_id, c.layout_id)
            and not c.status.finished
        )
        return [campaign_id for _, campaign_id in found]

    async def list(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[Campaign]:
        found = [
            c
            for c in self._campaigns.values()
            if c.account_id == account_id
            and (after is None or (c.created_at, c.campaign_id) < (after.created_at, after.lead_id))
        ]
        found.sort(key=lambda c: (c.created_at, c.campaign_id), reverse=True)
        return found[: limit + 1]


class MemoryRecipientRepository(RecipientRepository):
    """Reads the leads of a MemoryLeadRepository and the campaigns of a
    MemoryCampaignRepository (lease: only while running)."""

    def __init__(self, leads: MemoryLeadRepository, campaigns: MemoryCampaignRepository) -> None:
        self._leads = leads
        self._campaigns = campaigns
        self._rows: dict[str, dict[str, Recipient]] = {}  # campaign -> lead -> recipient
        self._leases: dict[tuple[str, str], str] = {}  # (campaign, lead) -> lease id
        self._retry: set[tuple[str, str]] = set()  # (campaign, batch): leasable as it was
        campaigns.on_remove(lambda campaign_id: self._rows.pop(campaign_id, None))

    async def freeze(self, campaign: Campaign, required: Sequence[str] = ()) -> int:
        rows = self._rows.setdefault(campaign.campaign_id, {})
        added = 0
        for lead in self._leads.all_of(campaign.account_id):
            if lead.lead_id in rows or not campaign.audience.matches(lead):
                continue
            lacking = next((key for key in required if key not in lead.fields), None)
            rows[lead.lead_id] = Recipient(
                campaign_id=campaign.campaign_id,
                lead_id=lead.lead_id,
                email=lead.email,
                status=_PENDING if lacking is None else RecipientStatus.SKIPPED,
                updated_at=campaign.updated_at,
                error="" if lacking is None else lacks_variable(lacking),
            )
            added += 1
        return added

    async def lease(
        self, campaign_id: str, limit: int, *, now: datetime, lease_until: datetime
    ) -> LeasedBatch | None:
        campaign = await self._campaigns.find(campaign_id)
        if campaign is None or campaign.status is not CampaignStatus.RUNNING:
            return None
        rows = self._rows.get(campaign_id, {})
        lease_id = new_lease_id()
        retry = sorted(batch for campaign, batch in self._retry if campaign == campaign_id)
        if retry:  # a batch left retryable: whole, as it was
            batch_id, retried = retry[0], True
            self._retry.discard((campaign_id, batch_id))
            held = [r for r in rows.values() if r.batch_id == batch_id and r.status is _SENDING]
        else:
            batch_id, retried = new_batch_id(), False
            pending = (r for r in rows.values() if r.status is _PENDING)
            held = sorted(pending, key=lambda r: r.lead_id)[:limit]
        if not held:
            return None
        leased = []
        for recipient in sorted(held, key=lambda r: r.lead_id):
            changed = replace(recipient, lease_until=lease_until, updated_at=now)
            if not retried:
                changed = replace(
                    changed, status=_SENDING, batch_id=batch_id, message_id=new_message_id()
                )
            rows[recipient.lead_id] = changed
            self._leases[(campaign_id, recipient.lead_id)] = lease_id
            leased.append(changed)
        return LeasedBatch(campaign_id, batch_id, lease_id, lease_until, leased, retried)

    async def record(
        self, batch: LeasedBatch, outcomes: Sequence[RecipientOutcome], now: datetime
    ) -> int:
        written = 0
        for outcome in outcomes:
            held = self._held(batch, outcome.lead_id)
            if held is None:
                continue
            self._end(
                held,
                status=outcome.status,
                error=outcome.error,
                updated_at=now,
                message_id=held.message_id if outcome.keeps_message else None,
            )
            written += 1
        return written

    async def release(self, batch: LeasedBatch, now: datetime) -> int:
        held = [r for r in batch.recipients if self._held(batch, r.lead_id) is not None]
        if batch.retried and held:
            self._retry.add((batch.campaign_id, batch.batch_id))
            return len(held)
        for recipient in held:
            current = self._rows[batch.campaign_id][recipient.lead_id]
            self._end(current, status=_PENDING, updated_at=now, message_id=None, batch_id=None)
        return len(held)

    async def expire(self, campaign_id: str, now: datetime, *, retryable: bool) -> int:
        expired = []
        for r in self._rows.get(campaign_id, {}).values():
            if r.status is not _SENDING or r.batch_id is None or r.lease_until is None:
                continue
            marked = (campaign_id, r.batch_id) in self._retry
            # Not retryable: a batch marked retryable before is not sent again either.
            if (not marked and r.lease_until < now) or (marked and not retryable):
                expired.append(r)
        for recipient in expired:
            assert recipient.batch_id is not None
            if retryable:
                self._retry.add((campaign_id, recipient.batch_id))
            else:
                self._retry.discard((campaign_id, recipient.batch_id))
                self._end(recipient, status=RecipientStatus.UNKNOWN, error=STOPPED, updated_at=now)
        return len(expired)

    async def cancel_pending(self, campaign_id: str, now: datetime, *, failure: str = "") -> int:
        changed = 0
        cancelled, unknown = stopped_errors(failure)
        for recipient in list(self._rows.get(campaign_id, {}).values()):
            if recipient.status is _PENDING:
                self._end(
                    recipient, status=RecipientStatus.CANCELLED, error=cancelled, updated_at=now
                )
            elif recipient.status is _SENDING and (campaign_id, recipient.batch_id) in self._retry:
                self._end(recipient, status=RecipientStatus.UNKNOWN, error=unknown, updated_at=now)
            else:
                continue
            changed += 1
        self._retry = {(c, b) for c, b in self._retry if c != campaign_id}
        return changed

    async def forget(self, campaign_id: str) -> int:
        rows = self._rows.get(campaign_id, {})
        gone = [r.lead_id for r in rows.values() if r.status in _FORGOTTEN]
        for lead_id in gone:
            del rows[lead_id]
        return len(gone)

    async def counts(self, campaign_id: str) -> CampaignCounts:
        return self._counts(campaign_id)

    async def counts_of(self, campaign_ids: Sequence[str]) -> dict[str, CampaignCounts]:
        return {cid: self._counts(cid) for cid in campaign_ids if self._rows.get(cid)}

    def _counts(self, campaign_id: str) -> CampaignCounts:
        by_status: dict[RecipientStatus, int] = {}
        for recipient in self._rows.get(campaign_id, {}).values():
            by_status[recipient.status] = by_status.get(recipient.status, 0) + 1
        return CampaignCounts.of(by_status)

    async def page(
        self,
        campaign_id: str,
        status: RecipientStatus | None,
        limit: int,
        after: str | None = None,
    ) -> list[Recipient]:
        rows = sorted(self._rows.get(campaign_id, {}).values(), key=lambda r: r.lead_id)
        return [
            r
            for r in rows
            if (after is None or r.lead_id > after) and (status is None or r.status.shown is status)
        ][: limit + 1]

    async def sent_since(self, campaign_id: str, since: datetime) -> int:
        return sum(
            1
            for r in self._rows.get(campaign_id, {}).values()
            if r.status is RecipientStatus.SENT and r.updated_at >= since
        )

    def _held(self, batch: LeasedBatch, lead_id: str) -> Recipient | None:
        """The recipient, if it is still ``sending`` under this very lease."""
        found = self._rows.get(batch.campaign_id, {}).get(lead_id)
        if found is None or found.status is not _SENDING or found.batch_id != batch.batch_id:
            return None
        if self._leases.get((batch.campaign_id, lead_id)) != batch.lease_id:
            return None
        return found

    def _end(self, recipient: Recipient, **changes: object) -> None:
        """The recipient changed, its lease and lease over."""
        changed = replace(recipient, lease_until=None, **changes)  # type: ignore[arg-type]
        self._rows[recipient.campaign_id][recipient.lead_id] = changed
        self._leases.pop((recipient.campaign_id, recipient.lead_id), None)
