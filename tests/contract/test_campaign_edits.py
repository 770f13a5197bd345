"""The repository methods behind editing and deleting a campaign, on memory, SQLite and
Postgres: ``rewrite`` writes a whole campaign as a compare-and-set on its status,
``remove`` deletes one (its recipients with it) only from the status given, and
``forget`` deletes only the recipients a freeze wrote (pending, skipped)."""

from __future__ import annotations

from dataclasses import replace

from leadmail.domain.campaign_recipients import RecipientOutcome
from leadmail.domain.campaigns import CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.segments import LeadFilter
from tests.contract.campaign_support import school
from tests.contract.support import Storage, a_campaign, moment

S = CampaignStatus


async def test_rewrite_writes_the_body_too_and_only_from_the_status_given(
    storage: Storage,
) -> None:
    account = await storage.new_account()
    draft = a_campaign(account)
    await storage.campaigns.add(draft)
    edited = replace(
        draft,
        name="April open day",
        template_id="class-reminder",
        audience=LeadFilter.from_json({"tag": "april", "field.city": "Leeds"}),
        variables={"school_name": "Northwind"},
        sender='"Admissions" <admissions@example.com>',
        reply_to="replies@example.com",
        send_at=moment(90_000),
        updated_at=moment(5),
    )

    assert await storage.campaigns.rewrite(edited, S.SCHEDULED) is None
    assert await storage.campaigns.get(account, draft.campaign_id) == draft
    assert await storage.campaigns.rewrite(edited, S.DRAFT) == edited
    assert await storage.campaigns.get(account, draft.campaign_id) == edited
    # A transition saved from a copy read before the edit still lands on the status
    # only: `save` never writes a body back.
    started = draft.start(moment(6))
    assert await storage.campaigns.save(started, S.DRAFT) is not None
    stored = await storage.campaigns.get(account, draft.campaign_id)
    assert stored is not None
    assert (stored.status, stored.name, stored.audience) == (
        S.RUNNING,
        "April open day",
        edited.audience,
    )


async def test_remove_deletes_only_from_the_status_given_and_takes_the_recipients(
    storage: Storage,
) -> None:
    kept = await school(storage, 3, running=False)
    assert await storage.recipients.freeze(kept.campaign) == 3  # left by an edit cut short

    assert not await storage.campaigns.remove(kept.campaign, S.RUNNING)
    assert await storage.campaigns.get(kept.account_id, kept.campaign_id) is not None
    assert (await kept.counts()).total == 3

    assert await storage.campaigns.remove(kept.campaign, S.DRAFT)
    assert await storage.campaigns.get(kept.account_id, kept.campaign_id) is None
    assert await storage.campaigns.find(kept.campaign_id) is None
    assert await kept.counts() == CampaignCounts()
    assert not await storage.campaigns.remove(kept.campaign, S.DRAFT)  # gone already


async def test_forget_deletes_pending_and_skipped_and_keeps_every_other_recipient(
    storage: Storage,
) -> None:
    found = await school(storage, 6)
    batch = await found.lease(limit=2)  # two sending, under a worker's lease
    sent = await found.lease(limit=1, at=2)
    outcome = [RecipientOutcome(r.lead_id, RecipientStatus.SENT) for r in sent.recipients]
    assert await storage.recipients.record(sent, outcome, moment(3)) == 1
    skipped = await found.lease(limit=1, at=4)
    lacking = [
        RecipientOutcome(r.lead_id, RecipientStatus.SKIPPED, "lacks city")
        for r in skipped.recipients
    ]
    assert await storage.recipients.record(skipped, lacking, moment(5)) == 1
    other = await school(storage, 2)

    assert await storage.recipients.forget(found.campaign_id) == 3  # 2 pending, 1 skipped

    left = await found.recipients()
    assert sorted((r.lead_id, r.status) for r in left) == sorted(
        [(r.lead_id, RecipientStatus.SENDING) for r in batch.recipients]
        + [(sent.recipients[0].lead_id, RecipientStatus.SENT)]
    )
    assert (await other.counts()).pending == 2  # another campaign's: untouched
    assert await storage.recipients.forget(found.campaign_id) == 0
