"""What the recipient contract suites share: a campaign of a new account with its leads,
started or not, and the checks every step must keep (the counts add up)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from leadmail.domain.campaign_recipients import LeasedBatch, Recipient, RecipientOutcome
from leadmail.domain.campaigns import Campaign, CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.custom_fields import FieldValue
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from tests.contract.support import Storage, a_campaign, a_lead, moment, unique_lead_id

LEASE = moment(60_000)  # a batch's lease, a minute after moment(0)


@dataclass
class School:
    """An account, its leads (by lead id order) and a campaign to all of them."""

    storage: Storage
    account_id: str
    leads: list[Lead]
    campaign: Campaign

    @property
    def campaign_id(self) -> str:
        return self.campaign.campaign_id

    async def counts(self) -> CampaignCounts:
        """The counts, checked to add up to the number of recipients."""
        counts = await self.storage.recipients.counts(self.campaign_id)
        everyone = await self.storage.recipients.page(self.campaign_id, None, 10_000)
        assert counts.total == len(everyone)
        return counts

    async def recipients(self, status: RecipientStatus | None = None) -> list[Recipient]:
        return await self.storage.recipients.page(self.campaign_id, status, 10_000)

    async def lease(self, limit: int = 100, at: int = 1, lease: datetime = LEASE) -> LeasedBatch:
        batch = await self.storage.recipients.lease(
            self.campaign_id, limit, now=moment(at), lease_until=lease
        )
        assert batch is not None
        return batch

    async def set_status(self, status: CampaignStatus) -> None:
        current = await self.storage.campaigns.find(self.campaign_id)
        assert current is not None
        changed = replace(current, status=status)
        assert await self.storage.campaigns.save(changed, current.status) == changed
        self.campaign = changed


async def school(
    storage: Storage,
    leads: int = 5,
    *,
    running: bool = True,
    audience: LeadFilter | None = None,
    fields: dict[int, dict[str, FieldValue]] | None = None,
) -> School:
    """A new account with ``leads`` leads (tagged "march"; ``fields`` by their index) and
    a campaign frozen to them, running (else a draft, not frozen)."""
    account = await storage.new_account()
    ids = sorted(unique_lead_id() for _ in range(leads))
    stored = [
        a_lead(account, lead_id=lead_id, tags=("march",), fields=(fields or {}).get(i, {}))
        for i, lead_id in enumerate(ids)
    ]
    for lead in stored:
        await storage.leads.add(lead)
    campaign = a_campaign(account, audience=audience)
    await storage.campaigns.add(campaign)
    found = School(storage, account, stored, campaign)
    if running:
        assert await storage.recipients.freeze(campaign) == leads
        await found.set_status(CampaignStatus.RUNNING)
    return found


def sent(batch: LeasedBatch) -> list[RecipientOutcome]:
    return [RecipientOutcome(r.lead_id, RecipientStatus.SENT) for r in batch.recipients]


def ids(recipients: list[Recipient]) -> list[str]:
    return [r.lead_id for r in recipients]
