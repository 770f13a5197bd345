"""The RecipientRepository contract (ports/campaigns.py), on memory, SQLite and Postgres:
the freeze (the segment's leads as they are now, once; skipped ones named), leases (only
while running, in lead order, new ids), outcomes recorded, counts that add up, pages by
status and the rate's count."""

from __future__ import annotations

from dataclasses import replace

import pytest

from leadmail.domain.campaign_recipients import RecipientOutcome, lacks_variable
from leadmail.domain.campaigns import CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.custom_fields import FieldValue
from leadmail.domain.segments import LeadFilter
from tests.contract.campaign_support import LEASE, ids, school, sent
from tests.contract.support import Storage, a_lead, moment

_S = RecipientStatus


class TestFreeze:
    async def test_one_pending_recipient_per_lead_of_the_audience_and_once(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 3, running=False, audience=LeadFilter(all_tags=("vip",)))
        vip = [a_lead(found.account_id, tags=("vip",), email=f"v{i}@example.com") for i in range(2)]
        for lead in vip:
            await storage.leads.add(lead)
        other = await storage.new_account()  # a lead of another account, with the tag too
        await storage.leads.add(a_lead(other, tags=("vip",)))

        assert await storage.recipients.freeze(found.campaign) == 2
        assert await storage.recipients.freeze(found.campaign) == 0  # twice: nothing more

        frozen = await found.recipients()
        assert ids(frozen) == sorted(lead.lead_id for lead in vip)
        assert {(r.email, r.status, r.message_id, r.batch_id, r.error) for r in frozen} == {
            (lead.email, _S.PENDING, None, None, "") for lead in vip
        }
        assert {r.campaign_id for r in frozen} == {found.campaign_id}
        later = a_lead(found.account_id, tags=("vip",))
        await storage.leads.add(later)
        assert await storage.recipients.freeze(found.campaign) == 1  # only the new lead
        assert (await found.counts()).total == 3

    async def test_a_lead_lacking_a_required_field_is_skipped_naming_it(
        self, storage: Storage
    ) -> None:
        fields: dict[int, dict[str, FieldValue]] = {
            0: {"city": "Leeds", "course": "Python"},
            1: {"city": "York"},
            2: {},
        }
        found = await school(storage, 3, running=False, fields=fields)

        assert await storage.recipients.freeze(found.campaign, ["city", "course"]) == 3

        by_lead = {r.lead_id: r for r in await found.recipients()}
        lead = [by_lead[lead.lead_id] for lead in found.leads]
        assert (lead[0].status, lead[0].error) == (_S.PENDING, "")
        assert (lead[1].status, lead[1].error) == (_S.SKIPPED, lacks_variable("course"))
        assert (lead[2].status, lead[2].error) == (_S.SKIPPED, lacks_variable("city"))
        assert await found.counts() == CampaignCounts(pending=1, skipped=2)

    async def test_the_segment_filters_by_custom_fields_and_time(self, storage: Storage) -> None:
        found = await school(storage, 0, running=False)
        old = a_lead(found.account_id, fields={"age": 34}, created_at=moment(0))
        new = a_lead(found.account_id, fields={"age": 34}, created_at=moment(5))
        text = a_lead(found.account_id, fields={"age": "34"}, created_at=moment(5))
        for lead in (old, new, text):
            await storage.leads.add(lead)
        audience = LeadFilter.from_json({"field.age": 34, "created_after": moment(1).isoformat()})
        campaign = replace(found.campaign, audience=audience)

        assert await storage.recipients.freeze(campaign) == 1
        assert ids(await found.recipients()) == [new.lead_id]


class TestLeaseAndRecord:
    async def test_a_claim_takes_pending_recipients_in_lead_order_with_new_ids(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 5)

        first = await found.lease(limit=3)
        second = await found.lease(limit=3)

        assert ids(list(first.recipients)) == [lead.lead_id for lead in found.leads[:3]]
        assert ids(list(second.recipients)) == [lead.lead_id for lead in found.leads[3:]]
        assert not first.retried
        assert first.batch_id != second.batch_id
        assert first.lease_id != second.lease_id
        both = [*first.recipients, *second.recipients]
        assert all(r.status is _S.SENDING and r.lease_until == LEASE for r in both)
        assert {r.batch_id for r in first.recipients} == {first.batch_id}
        message_ids = {r.message_id for r in both}
        assert None not in message_ids
        assert len(message_ids) == 5
        assert all(str(m).startswith("msg_") for m in message_ids)
        assert await storage.recipients.lease(
            found.campaign_id, 3, now=moment(2), lease_until=LEASE
        ) is None  # fmt: skip
        assert await found.counts() == CampaignCounts(pending=5)  # sending shows as pending

    @pytest.mark.parametrize(
        "status",
        [CampaignStatus.DRAFT, CampaignStatus.SCHEDULED, CampaignStatus.PAUSED,
         CampaignStatus.CANCELLED, CampaignStatus.DONE],
    )  # fmt: skip
    async def test_nothing_is_claimed_unless_the_campaign_is_running(
        self, storage: Storage, status: CampaignStatus
    ) -> None:
        found = await school(storage, 2)
        await found.set_status(status)

        leased = await storage.recipients.lease(
            found.campaign_id, 10, now=moment(1), lease_until=LEASE
        )

        assert leased is None
        assert {r.status for r in await found.recipients()} == {_S.PENDING}
        await found.set_status(CampaignStatus.RUNNING)
        assert len((await found.lease()).recipients) == 2

    async def test_outcomes_are_recorded_and_the_counts_add_up(self, storage: Storage) -> None:
        found = await school(storage, 4)
        batch = await found.lease(limit=3)
        a, b, c = batch.recipients
        outcomes = [
            RecipientOutcome(a.lead_id, _S.SENT),
            RecipientOutcome(b.lead_id, _S.FAILED, "the provider refused: bad mailbox"),
            RecipientOutcome(c.lead_id, _S.SKIPPED, lacks_variable("city")),
        ]

        assert await storage.recipients.record(batch, outcomes, moment(2)) == 3

        by_lead = {r.lead_id: r for r in await found.recipients()}
        assert (by_lead[a.lead_id].status, by_lead[a.lead_id].message_id) == (_S.SENT, a.message_id)
        assert by_lead[a.lead_id].lease_until is None
        assert by_lead[a.lead_id].updated_at == moment(2)
        assert (by_lead[b.lead_id].status, by_lead[b.lead_id].error) == (
            _S.FAILED,
            "the provider refused: bad mailbox",
        )
        assert by_lead[b.lead_id].message_id == b.message_id
        assert (by_lead[c.lead_id].status, by_lead[c.lead_id].message_id) == (_S.SKIPPED, None)
        assert await found.counts() == CampaignCounts(pending=1, sent=1, failed=1, skipped=1)
        # Recorded once: again, nothing is written.
        assert await storage.recipients.record(batch, outcomes, moment(3)) == 0

    async def test_the_counts_of_several_campaigns_at_once_are_each_ones(
        self, storage: Storage
    ) -> None:
        first, second = await school(storage, 4), await school(storage, 2)
        await storage.recipients.record(batch := await first.lease(limit=3), sent(batch), moment(2))
        draft = await school(storage, 3, running=False)

        found = await storage.recipients.counts_of(
            [first.campaign_id, second.campaign_id, draft.campaign_id]
        )

        assert found == {
            first.campaign_id: CampaignCounts(pending=1, sent=3),
            second.campaign_id: CampaignCounts(pending=2),
        }  # a draft has no recipients yet
        assert found[first.campaign_id] == await first.counts()
        assert await storage.recipients.counts_of([]) == {}

    async def test_a_record_writes_only_the_batchs_own_recipients(self, storage: Storage) -> None:
        found = await school(storage, 4)
        one = await found.lease(limit=2)
        two = await found.lease(limit=2)

        # Outcomes of the other batch's recipients, under this batch: none is written.
        assert await storage.recipients.record(one, sent(two), moment(2)) == 0
        assert await storage.recipients.record(two, sent(two), moment(2)) == 2
        assert await found.counts() == CampaignCounts(pending=2, sent=2)

    async def test_pages_in_lead_order_by_status(self, storage: Storage) -> None:
        found = await school(storage, 5)
        batch = await found.lease(limit=2)
        await storage.recipients.record(batch, sent(batch)[:1], moment(2))
        every = [lead.lead_id for lead in found.leads]

        first = await storage.recipients.page(found.campaign_id, None, 2)
        rest = await storage.recipients.page(found.campaign_id, None, 2, after=first[1].lead_id)
        pending = await storage.recipients.page(found.campaign_id, _S.PENDING, 10)
        done = await storage.recipients.page(found.campaign_id, _S.SENT, 10)

        assert ids(first) == every[:3]  # limit + 1
        assert ids(rest) == every[2:5]
        assert ids(pending) == every[1:]  # the one still sending is pending to a client
        assert ids(done) == every[:1]
        assert await storage.recipients.page(found.campaign_id, _S.FAILED, 10) == []
        assert await storage.recipients.page("cmp_missing", None, 10) == []

    async def test_sent_since_counts_the_sends_from_a_moment_on(self, storage: Storage) -> None:
        found = await school(storage, 4)
        early, late = await found.lease(limit=2), await found.lease(limit=2)
        await storage.recipients.record(early, sent(early), moment(1_000))
        await storage.recipients.record(late, sent(late)[:1], moment(5_000))
        failed = [RecipientOutcome(late.recipients[1].lead_id, _S.FAILED, "no")]
        await storage.recipients.record(late, failed, moment(5_000))

        assert await storage.recipients.sent_since(found.campaign_id, moment(0)) == 3
        assert await storage.recipients.sent_since(found.campaign_id, moment(5_000)) == 1
        assert await storage.recipients.sent_since(found.campaign_id, moment(5_001)) == 0
