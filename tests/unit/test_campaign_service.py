"""The campaign service on the memory adapters, with a clock that stands still: the checks
at creation and start (nothing stored or queued when one fails), the audience frozen at
the start, the job queued (at send_at when scheduled), the actions, counts, pace and ETA,
pages, and the scheduled campaign that begins at its time."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from leadmail.adapters.memory.campaigns import MemoryCampaignRepository, MemoryRecipientRepository
from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.domain.campaign_recipients import RecipientOutcome, lacks_variable
from leadmail.domain.campaigns import (
    AudienceEmpty,
    Campaign,
    CampaignCounts,
    CampaignNotFound,
    CampaignStateConflict,
    CampaignStatus,
    RecipientStatus,
)
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import TemplateNotFound, ValidationFailed
from leadmail.domain.leads import Lead, new_lead_id
from leadmail.services.campaign_checks import CampaignEdit, CampaignRequest
from leadmail.services.campaigns import CAMPAIGN_JOB, CampaignService
from tests.unit.fakes import START, FakeClock

ACCOUNT = "acc_school"
SHARED = {"school_name": "Northwind", "courses_link": "https://example.com/c"}


class RecordingJobs(InProcessJobQueue):
    """The in-process queue, never started here: what was queued, and when for."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[tuple[str, str, datetime | None]] = []

    async def enqueue(self, kind: str, payload: str, *, run_at: datetime | None = None) -> None:
        self.queued.append((kind, payload, run_at))
        await super().enqueue(kind, payload, run_at=run_at)


@dataclass
class Rig:
    adapters: Adapters
    campaigns: CampaignService
    jobs: RecordingJobs
    clock: FakeClock

    async def lead(self, email: str, account: str = ACCOUNT, **fields: Any) -> Lead:
        lead = Lead(new_lead_id(), account, "Ada Lovelace", email, "", "", "", START, START,
                    tags=("march",), fields=fields)  # fmt: skip
        return await self.adapters.leads.add(lead)


@pytest.fixture
async def rig() -> Rig:
    jobs = RecordingJobs()
    adapters = dataclasses.replace(Adapters.in_memory(), jobs=jobs)
    clock = FakeClock()
    settings = Settings(
        email_default_from="team@example.com", allowed_sender_domains=("example.com",)
    )
    services = wire(adapters, settings, clock)
    await services.templates.sync()
    return Rig(adapters, services.campaigns, jobs, clock)


def request(**changes: Any) -> CampaignRequest:
    given: dict[str, Any] = {
        "name": "March open day",
        "template_id": "welcome",
        "audience": {"tag": "march"},
        "variables": {**SHARED, "contact_email": "hello@example.com"},
        **changes,
    }
    return CampaignRequest(**given)


async def test_created_it_runs_at_once_its_audience_frozen_and_its_job_queued(rig: Rig) -> None:
    leads = [await rig.lead(f"l{i}@example.com") for i in range(3)]
    await rig.lead("other@example.com", account="acc_other")

    view = await rig.campaigns.create(ACCOUNT, request())

    campaign = view.campaign
    assert (campaign.status, campaign.started_at) == (CampaignStatus.RUNNING, START)
    assert campaign.sender == "team@example.com"  # the configured default
    assert view.counts == CampaignCounts(pending=3)
    assert rig.jobs.queued == [(CAMPAIGN_JOB, campaign.campaign_id, None)]
    page = await rig.campaigns.recipients(ACCOUNT, campaign.campaign_id, None, 10)
    assert sorted(r.lead_id for r in page.items) == sorted(lead.lead_id for lead in leads)
    await rig.lead("late@example.com")  # frozen: a lead added now is not a recipient
    assert (await rig.campaigns.get(ACCOUNT, campaign.campaign_id)).counts.total == 3


async def test_a_draft_counts_the_leads_matching_now_until_its_start(rig: Rig) -> None:
    await rig.lead("a@example.com")
    draft = (await rig.campaigns.create(ACCOUNT, request(draft=True))).campaign
    await rig.lead("b@example.com")

    shown = await rig.campaigns.get(ACCOUNT, draft.campaign_id)

    assert (shown.campaign.status, shown.counts) == (
        CampaignStatus.DRAFT,
        CampaignCounts(pending=2),
    )
    assert rig.jobs.queued == []
    assert (await rig.campaigns.recipients(ACCOUNT, draft.campaign_id, None, 10)).items == []
    started = await rig.campaigns.start(ACCOUNT, draft.campaign_id)
    assert started.campaign.status is CampaignStatus.RUNNING
    assert started.counts == CampaignCounts(pending=2)
    with pytest.raises(CampaignStateConflict, match="is running"):
        await rig.campaigns.start(ACCOUNT, draft.campaign_id)


async def test_with_send_at_ahead_it_is_scheduled_and_its_job_queued_for_then(rig: Rig) -> None:
    await rig.lead("a@example.com")
    at = START + timedelta(hours=2)

    view = await rig.campaigns.create(ACCOUNT, request(send_at="2026-01-05T12:30:00+01:00"))

    assert view.campaign.status is CampaignStatus.SCHEDULED
    assert view.campaign.send_at == at  # 12:30 at +01:00 is two hours after START
    assert view.counts == CampaignCounts(pending=1)  # frozen at the start, already
    assert rig.jobs.queued == [(CAMPAIGN_JOB, view.campaign.campaign_id, at)]
    past = await rig.campaigns.create(ACCOUNT, request(send_at="2020-01-01T00:00:00Z"))
    assert past.campaign.status is CampaignStatus.RUNNING  # a time in the past: at once


async def test_the_job_begins_a_scheduled_campaign_at_its_time_and_not_before(rig: Rig) -> None:
    await rig.lead("a@example.com")
    view = await rig.campaigns.create(ACCOUNT, request(send_at="2026-01-05T12:30:00Z"))
    campaign_id = view.campaign.campaign_id

    await rig.campaigns.begin_when_due(campaign_id)  # hours early: queued again for its time
    assert (
        await rig.campaigns.get(ACCOUNT, campaign_id)
    ).campaign.status is CampaignStatus.SCHEDULED
    assert rig.jobs.queued[-1] == (CAMPAIGN_JOB, campaign_id, view.campaign.send_at)

    rig.clock.advance(timedelta(hours=3))
    await rig.campaigns.begin_when_due(campaign_id)

    begun = (await rig.campaigns.get(ACCOUNT, campaign_id)).campaign
    assert (begun.status, begun.started_at) == (CampaignStatus.RUNNING, rig.clock.now)
    await rig.campaigns.begin_when_due(campaign_id)  # again: nothing more to do
    await rig.campaigns.begin_when_due("cmp_missing")


async def test_pause_resume_and_cancel(rig: Rig) -> None:
    for i in range(4):
        await rig.lead(f"l{i}@example.com")
    campaign_id = (await rig.campaigns.create(ACCOUNT, request())).campaign.campaign_id
    batch = await rig.adapters.recipients.lease(
        campaign_id, 1, now=START, lease_until=START + timedelta(minutes=1)
    )
    assert batch is not None

    paused = await rig.campaigns.pause(ACCOUNT, campaign_id)
    with pytest.raises(CampaignStateConflict, match="is paused: it cannot pause"):
        await rig.campaigns.pause(ACCOUNT, campaign_id)
    resumed = await rig.campaigns.resume(ACCOUNT, campaign_id)
    cancelled = await rig.campaigns.cancel(ACCOUNT, campaign_id)

    assert paused.campaign.status is CampaignStatus.PAUSED
    assert resumed.campaign.status is CampaignStatus.RUNNING
    assert rig.jobs.queued[-1] == (CAMPAIGN_JOB, campaign_id, None)  # resumed: queued again
    assert cancelled.campaign.status is CampaignStatus.CANCELLED
    # The batch being sent is left to its worker; the rest is cancelled.
    assert cancelled.counts == CampaignCounts(pending=1, cancelled=3)
    sent = [RecipientOutcome(batch.recipients[0].lead_id, RecipientStatus.SENT)]
    assert await rig.adapters.recipients.record(batch, sent, START) == 1
    with pytest.raises(CampaignStateConflict, match="is cancelled: it cannot resume"):
        await rig.campaigns.resume(ACCOUNT, campaign_id)


async def test_the_pace_and_time_left_while_running(rig: Rig) -> None:
    for i in range(10):
        await rig.lead(f"l{i}@example.com")
    campaign_id = (await rig.campaigns.create(ACCOUNT, request())).campaign.campaign_id
    rig.clock.advance(timedelta(seconds=20))
    batch = await rig.adapters.recipients.lease(
        campaign_id, 4, now=rig.clock.now, lease_until=rig.clock.now + timedelta(minutes=1)
    )
    assert batch is not None
    sent = [RecipientOutcome(r.lead_id, RecipientStatus.SENT) for r in batch.recipients]
    await rig.adapters.recipients.record(batch, sent, rig.clock.now)
    rig.clock.advance(timedelta(seconds=10))

    view = await rig.campaigns.get(ACCOUNT, campaign_id)

    assert view.counts == CampaignCounts(pending=6, sent=4)
    assert view.rate_per_minute == 8  # 4 in the 30 s it has run
    assert view.eta_seconds == 45  # 6 more at 8 a minute
    rig.clock.advance(timedelta(minutes=2))  # nothing sent in the last minute
    later = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (later.rate_per_minute, later.eta_seconds) == (0, None)


async def test_lists_and_recipients_come_a_page_at_a_time(rig: Rig) -> None:
    for i in range(3):
        await rig.lead(f"l{i}@example.com")
    made = []
    for _ in range(3):
        made.append((await rig.campaigns.create(ACCOUNT, request())).campaign.campaign_id)
        rig.clock.advance(timedelta(seconds=1))

    first = await rig.campaigns.list(ACCOUNT, 2)
    rest = await rig.campaigns.list(ACCOUNT, 2, first.next_cursor)
    one = await rig.campaigns.recipients(ACCOUNT, made[0], None, 2)
    two = await rig.campaigns.recipients(ACCOUNT, made[0], None, 2, one.next_cursor)

    assert [v.campaign.campaign_id for v in [*first.items, *rest.items]] == made[::-1]
    assert rest.next_cursor is None
    assert len(one.items) == 2
    assert [r.lead_id for r in [*one.items, *two.items]] == sorted(
        r.lead_id for r in [*one.items, *two.items]
    )
    assert two.next_cursor is None
    assert (await rig.campaigns.list("acc_other", 10)).items == []


@pytest.mark.parametrize(
    ("changes", "error", "fields"),
    [
        ({"template_id": "nope"}, TemplateNotFound, None),
        ({"audience": {"tag": "nobody-has-it"}}, AudienceEmpty, None),
        ({"variables": SHARED}, ValidationFailed, ["variables.contact_email"]),
        ({"variables": {}}, ValidationFailed,
         ["variables.contact_email", "variables.courses_link", "variables.school_name"]),
        ({"audience": {"tag": "bad tag!", "colour": "red"}}, ValidationFailed,
         ["audience.tag", "audience.colour"]),
        ({"name": " ", "send_at": "tomorrow", "reply_to": "nobody"}, ValidationFailed,
         ["name", "send_at", "reply_to"]),
        ({"sender": "someone@elsewhere.example"}, SenderNotAllowed, None),
    ],
)  # fmt: skip
async def test_a_failed_check_stores_and_queues_nothing(
    rig: Rig, changes: dict[str, Any], error: type[Exception], fields: list[str] | None
) -> None:
    await rig.lead("a@example.com")

    with pytest.raises(error) as refused:
        await rig.campaigns.create(ACCOUNT, request(**changes))

    if fields is not None:
        assert isinstance(refused.value, ValidationFailed)
        assert sorted(e.field for e in refused.value.errors) == sorted(fields)
    assert (await rig.campaigns.list(ACCOUNT, 10)).items == []
    assert rig.jobs.queued == []


async def test_a_draft_is_held_at_its_start_to_the_sender_domains_of_that_time() -> None:
    jobs = RecordingJobs()
    adapters = dataclasses.replace(Adapters.in_memory(), jobs=jobs)
    services = wire(adapters, Settings(email_default_from="team@example.com"), FakeClock())
    await services.templates.sync()
    lead = Lead(
        new_lead_id(), ACCOUNT, "Ada", "a@example.com", "", "", "", START, START, ("march",)
    )
    await adapters.leads.add(lead)
    draft = (
        await services.campaigns.create(ACCOUNT, request(draft=True, reply_to="r@help.example"))
    ).campaign
    await services.sender_domains.add(ACCOUNT, "example.com")  # its `from`, not its reply_to

    with pytest.raises(SenderNotAllowed, match="`reply_to`"):
        await services.campaigns.start(ACCOUNT, draft.campaign_id)

    shown = await services.campaigns.get(ACCOUNT, draft.campaign_id)
    assert (shown.campaign.status, shown.counts) == (
        CampaignStatus.DRAFT,
        CampaignCounts(pending=1),
    )
    assert jobs.queued == []
    await services.sender_domains.add(ACCOUNT, "help.example")
    started = await services.campaigns.start(ACCOUNT, draft.campaign_id)
    assert started.campaign.status is CampaignStatus.RUNNING


async def test_a_variable_any_lead_of_the_audience_has_will_do_and_the_rest_are_skipped(
    rig: Rig,
) -> None:
    has = await rig.lead("has@example.com", contact_email="ada@example.com")
    lacks = await rig.lead("lacks@example.com")

    view = await rig.campaigns.create(ACCOUNT, request(variables=SHARED))

    page = await rig.campaigns.recipients(ACCOUNT, view.campaign.campaign_id, None, 10)
    by_lead = {r.lead_id: r for r in page.items}
    assert by_lead[has.lead_id].status is RecipientStatus.PENDING
    assert by_lead[lacks.lead_id].status is RecipientStatus.SKIPPED
    assert by_lead[lacks.lead_id].error == lacks_variable("contact_email")
    assert view.counts == CampaignCounts(pending=1, skipped=1)


async def test_another_account_never_sees_a_campaign(rig: Rig) -> None:
    await rig.lead("a@example.com")
    campaign_id = (await rig.campaigns.create(ACCOUNT, request())).campaign.campaign_id

    for call in (
        rig.campaigns.get("acc_other", campaign_id),
        rig.campaigns.pause("acc_other", campaign_id),
        rig.campaigns.cancel("acc_other", campaign_id),
        rig.campaigns.recipients("acc_other", campaign_id, None, 10),
    ):
        with pytest.raises(CampaignNotFound):
            await call
    assert (await rig.campaigns.get(ACCOUNT, campaign_id)).campaign.status is CampaignStatus.RUNNING


class CancelledMeanwhile(MemoryRecipientRepository):
    """A cancel request lands while the start freezes the audience (its cancel_pending
    ran before the freeze wrote anything)."""

    def __init__(self, adapters: Adapters) -> None:
        assert isinstance(adapters.leads, MemoryLeadRepository)
        assert isinstance(adapters.campaigns, MemoryCampaignRepository)
        super().__init__(adapters.leads, adapters.campaigns)
        self.campaigns = adapters.campaigns

    async def freeze(self, campaign: Campaign, required: Sequence[str] = ()) -> int:
        stored = await self.campaigns.find(campaign.campaign_id)
        assert stored is not None
        await self.campaigns.save(stored.cancel(START), CampaignStatus.DRAFT)
        return await super().freeze(campaign, required)


async def test_a_start_that_loses_to_a_cancel_leaves_no_recipient_pending() -> None:
    adapters = Adapters.in_memory()
    adapters.recipients = CancelledMeanwhile(adapters)
    services = wire(adapters, Settings(email_default_from="team@example.com"), FakeClock())
    await services.templates.sync()
    lead = Lead(
        new_lead_id(), ACCOUNT, "Ada", "a@example.com", "", "", "", START, START, ("march",)
    )
    await adapters.leads.add(lead)
    draft = (await services.campaigns.create(ACCOUNT, request(draft=True))).campaign

    with pytest.raises(CampaignStateConflict, match="is cancelled"):
        await services.campaigns.start(ACCOUNT, draft.campaign_id)

    shown = await services.campaigns.get(ACCOUNT, draft.campaign_id)
    assert shown.counts == CampaignCounts(cancelled=1)


async def test_active_campaigns_are_queued_again_at_start(rig: Rig) -> None:
    await rig.lead("a@example.com")
    running = (await rig.campaigns.create(ACCOUNT, request())).campaign
    scheduled = (
        await rig.campaigns.create(ACCOUNT, request(send_at="2030-01-01T00:00:00Z"))
    ).campaign
    await rig.campaigns.create(ACCOUNT, request(draft=True))
    rig.jobs.queued.clear()

    assert await rig.campaigns.requeue_active() == 2

    assert sorted(rig.jobs.queued, key=str) == sorted(
        [(CAMPAIGN_JOB, running.campaign_id, None),
         (CAMPAIGN_JOB, scheduled.campaign_id, scheduled.send_at)], key=str
    )  # fmt: skip


class CountingRecipients(MemoryRecipientRepository):
    """The memory recipients, with how many times each kind of count was asked."""

    def __init__(self, leads: MemoryLeadRepository, campaigns: MemoryCampaignRepository) -> None:
        super().__init__(leads, campaigns)
        self.asked: list[str] = []

    async def counts(self, campaign_id: str) -> CampaignCounts:
        self.asked.append("counts")
        return await super().counts(campaign_id)

    async def counts_of(self, campaign_ids: Sequence[str]) -> dict[str, CampaignCounts]:
        self.asked.append(f"counts_of {len(campaign_ids)}")
        return await super().counts_of(campaign_ids)


async def test_a_page_of_campaigns_is_counted_in_one_grouped_count(rig: Rig) -> None:
    assert isinstance(rig.adapters.leads, MemoryLeadRepository)
    assert isinstance(rig.adapters.campaigns, MemoryCampaignRepository)
    counting = CountingRecipients(rig.adapters.leads, rig.adapters.campaigns)
    settings = Settings(email_default_from="team@example.com")
    services = wire(dataclasses.replace(rig.adapters, recipients=counting), settings, rig.clock)
    for i in range(3):
        await rig.lead(f"l{i}@example.com")
    made = [
        (await services.campaigns.create(ACCOUNT, request(draft=draft))).campaign.campaign_id
        for draft in (False, True, False)
    ]
    await services.campaigns.cancel(ACCOUNT, made[2])
    counting.asked.clear()

    page = await services.campaigns.list(ACCOUNT, 10)

    assert counting.asked == ["counts_of 2"]  # the draft counts its audience instead
    by_id = {view.campaign.campaign_id: view.counts for view in page.items}
    assert by_id == {
        made[0]: CampaignCounts(pending=3),
        made[1]: CampaignCounts(pending=3),
        made[2]: CampaignCounts(cancelled=3),
    }
    for campaign_id in made:  # as each one's own page shows them
        assert by_id[campaign_id] == (await services.campaigns.get(ACCOUNT, campaign_id)).counts


async def test_an_edited_scheduled_campaign_is_queued_again_at_its_new_time(rig: Rig) -> None:
    await rig.lead("a@example.com")
    later, sooner = START + timedelta(days=2), START + timedelta(days=1)
    made = await rig.campaigns.create(ACCOUNT, request(send_at=later.isoformat()))
    campaign_id = made.campaign.campaign_id

    moved = await rig.campaigns.edit(
        ACCOUNT, campaign_id, CampaignEdit({"send_at": sooner.isoformat()})
    )
    now = await rig.campaigns.edit(ACCOUNT, campaign_id, CampaignEdit({"send_at": None}))

    assert (moved.campaign.status, moved.campaign.send_at) == (CampaignStatus.SCHEDULED, sooner)
    assert now.campaign.status is CampaignStatus.RUNNING
    assert rig.jobs.queued == [
        (CAMPAIGN_JOB, campaign_id, later),
        (CAMPAIGN_JOB, campaign_id, sooner),
        (CAMPAIGN_JOB, campaign_id, None),
    ]
    assert now.counts == CampaignCounts(pending=1)  # frozen anew: still one recipient


@pytest.mark.parametrize("action", ["edit", "delete"])
async def test_a_change_that_loses_a_race_is_409_and_changes_nothing(
    rig: Rig, action: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await rig.lead("a@example.com")
    draft = (await rig.campaigns.create(ACCOUNT, request(draft=True))).campaign
    store = rig.adapters.campaigns
    method = "rewrite" if action == "edit" else "remove"
    original = getattr(store, method)

    async def started_first(campaign: Campaign, expected: CampaignStatus) -> Any:
        await rig.campaigns.start(ACCOUNT, draft.campaign_id)  # another request's
        return await original(campaign, expected)

    monkeypatch.setattr(store, method, started_first)
    change = (
        rig.campaigns.edit(ACCOUNT, draft.campaign_id, CampaignEdit({"name": "New"}))
        if action == "edit"
        else rig.campaigns.delete(ACCOUNT, draft.campaign_id)
    )
    with pytest.raises(CampaignStateConflict, match="is running: it cannot be"):
        await change

    view = await rig.campaigns.get(ACCOUNT, draft.campaign_id)
    assert (view.campaign.status, view.campaign.name) == (CampaignStatus.RUNNING, draft.name)
    assert view.counts == CampaignCounts(pending=1)
