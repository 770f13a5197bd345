"""The CampaignRepository contract (ports/campaigns.py), on memory, SQLite and Postgres:
a campaign stored and read back whole, only by its account; a transition saved as a
compare-and-set on its status; pages newest first; the active campaigns of every account."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from leadmail.domain.campaigns import CampaignStatus
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.segments import LeadFilter
from tests.contract.support import Storage, a_campaign, moment

AUDIENCE = LeadFilter.from_json(
    {
        "tag": ["interested:python", "evening"],
        "not_tag": "enrolled",
        "email": "Ada@Example.com",
        "created_after": "2026-01-01T00:00:00Z",
        "field.age": 34,
        "field.city": "Leeds",
        "field.newsletter": True,
    }
)


async def test_a_campaign_is_read_back_whole_and_only_by_its_account(storage: Storage) -> None:
    account = await storage.new_account()
    campaign = a_campaign(
        account,
        audience=AUDIENCE,
        variables={"school_name": "Northwind", "empty": ""},
        reply_to="replies@example.com",
        send_at=moment(60_000),
        status=CampaignStatus.SCHEDULED,
        started_at=None,
    )

    await storage.campaigns.add(campaign)

    assert await storage.campaigns.get(account, campaign.campaign_id) == campaign
    assert await storage.campaigns.find(campaign.campaign_id) == campaign
    stranger = await storage.new_account()
    assert await storage.campaigns.get(stranger, campaign.campaign_id) is None
    assert await storage.campaigns.get(account, "cmp_missing") is None
    assert await storage.campaigns.find("cmp_missing") is None


async def test_a_transition_is_saved_only_from_the_status_it_was_made_from(
    storage: Storage,
) -> None:
    account = await storage.new_account()
    draft = a_campaign(account)
    await storage.campaigns.add(draft)
    running = draft.start(moment(1))
    cancelled = draft.cancel(moment(2))

    assert await storage.campaigns.save(running, CampaignStatus.DRAFT) == running
    # Made from the draft too, but the draft is gone: refused, nothing written.
    assert await storage.campaigns.save(cancelled, CampaignStatus.DRAFT) is None
    assert await storage.campaigns.get(account, draft.campaign_id) == running

    failed = running.fail(moment(3), "the template 'welcome' was removed")
    assert await storage.campaigns.save(failed, CampaignStatus.RUNNING) == failed
    stored = await storage.campaigns.get(account, draft.campaign_id)
    assert stored is not None
    assert (stored.status, stored.failure_reason) == (CampaignStatus.FAILED, failed.failure_reason)
    assert (stored.started_at, stored.finished_at) == (moment(1), moment(3))


async def test_of_two_transitions_at_once_from_one_status_one_lands(storage: Storage) -> None:
    account = await storage.new_account()
    running = a_campaign(account).start(moment(1))
    await storage.campaigns.add(running)

    results = await asyncio.gather(
        storage.campaigns.save(running.pause(moment(2)), CampaignStatus.RUNNING),
        storage.campaigns.save(running.cancel(moment(2)), CampaignStatus.RUNNING),
    )

    assert sum(result is not None for result in results) == 1
    stored = await storage.campaigns.get(account, running.campaign_id)
    assert stored in results


async def test_campaigns_are_listed_newest_first_a_page_at_a_time(storage: Storage) -> None:
    account = await storage.new_account()
    campaigns = [a_campaign(account, created_at=moment(i)) for i in range(5)]
    tied = a_campaign(account, created_at=moment(2))  # the same moment as another
    for campaign in [*campaigns, tied]:
        await storage.campaigns.add(campaign)
    await storage.campaigns.add(a_campaign(await storage.new_account()))  # not this account's
    expected = sorted([*campaigns, tied], key=lambda c: (c.created_at, c.campaign_id), reverse=True)

    first = await storage.campaigns.list(account, 4)
    last = first[3]
    rest = await storage.campaigns.list(account, 4, PageCursor(last.created_at, last.campaign_id))

    assert first == expected[:5]  # limit + 1: one more says there is a next page
    assert rest == expected[4:]


async def test_active_campaigns_are_the_running_and_scheduled_of_every_account(
    storage: Storage,
) -> None:
    one, two = await storage.new_account(), await storage.new_account()
    by_status = {
        status: a_campaign(one if i % 2 else two, status=status, created_at=moment(i))
        for i, status in enumerate(CampaignStatus)
    }
    for campaign in by_status.values():
        await storage.campaigns.add(campaign)
    ours = {c.campaign_id for c in by_status.values()}

    active = [c for c in await storage.campaigns.active() if c.campaign_id in ours]

    assert active == [by_status[CampaignStatus.SCHEDULED], by_status[CampaignStatus.RUNNING]]
    paused = replace(by_status[CampaignStatus.RUNNING], status=CampaignStatus.PAUSED)
    assert await storage.campaigns.save(paused, CampaignStatus.RUNNING) == paused
    active = [c for c in await storage.campaigns.active() if c.campaign_id in ours]
    assert active == [by_status[CampaignStatus.SCHEDULED]]
