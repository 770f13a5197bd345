"""The RecipientRepository contract for what goes wrong while sending, on memory, SQLite and
Postgres: leases that expire (retryable as the same batch, or unknown), a late worker that
writes nothing, batches given back, cancellation; and on Postgres, leases made at once by
many workers that never share a recipient or a batch."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from leadmail.adapters.db.campaign_recipients import PiccoloRecipientRepository
from leadmail.domain.campaign_recipients import (
    CANCELLED_UNKNOWN,
    STOPPED,
    LeasedBatch,
    stopped_errors,
)
from leadmail.domain.campaigns import CampaignCounts, CampaignStatus, RecipientStatus
from tests.contract.campaign_support import LEASE, School, ids, school, sent
from tests.contract.support import Storage, moment

_S = RecipientStatus
AFTER_LEASE = moment(60_001)


async def expired(found: School, *, retryable: bool, at: datetime = AFTER_LEASE) -> int:
    return await found.storage.recipients.expire(found.campaign_id, at, retryable=retryable)


class TestExpire:
    async def test_a_retryable_batch_comes_back_whole_with_its_ids(self, storage: Storage) -> None:
        found = await school(storage, 5)
        first = await found.lease(limit=3)
        assert await expired(found, retryable=True, at=LEASE) == 0  # not before its lease ends

        assert await expired(found, retryable=True) == 3
        assert await expired(found, retryable=True) == 0  # marked once
        again = await found.lease(limit=2, at=70_000, lease=moment(130_000))

        assert again.retried
        assert again.batch_id == first.batch_id
        assert again.lease_id != first.lease_id
        assert [(r.lead_id, r.message_id) for r in again.recipients] == [
            (r.lead_id, r.message_id) for r in first.recipients
        ]  # the whole batch, though the limit is 2
        assert {r.lease_until for r in again.recipients} == {moment(130_000)}
        nxt = await found.lease(limit=10, at=70_001)  # then the pending ones
        assert not nxt.retried
        assert ids(list(nxt.recipients)) == [lead.lead_id for lead in found.leads[3:]]
        assert await found.counts() == CampaignCounts(pending=5)

    async def test_a_late_worker_writes_nothing_once_its_batch_is_claimed_again(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 3)
        lost = await found.lease()
        await expired(found, retryable=True)
        again = await found.lease(at=70_000, lease=moment(130_000))

        assert await storage.recipients.record(lost, sent(lost), moment(70_001)) == 0
        assert await storage.recipients.release(lost, moment(70_001)) == 0
        assert await found.counts() == CampaignCounts(pending=3)
        assert await storage.recipients.record(again, sent(again), moment(70_002)) == 3
        assert await found.counts() == CampaignCounts(sent=3)

    async def test_a_late_record_lands_while_its_batch_waits_for_a_retry(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 2)
        slow = await found.lease()
        await expired(found, retryable=True)

        assert await storage.recipients.record(slow, sent(slow), moment(60_002)) == 2
        assert await storage.recipients.lease(
            found.campaign_id, 10, now=moment(60_003), lease_until=moment(120_000)
        ) is None  # fmt: skip
        assert await found.counts() == CampaignCounts(sent=2)

    async def test_not_retryable_the_batch_becomes_unknown_for_good(self, storage: Storage) -> None:
        found = await school(storage, 3)
        lost = await found.lease(limit=2)
        live = await found.lease(limit=1, lease=moment(120_000))

        assert await expired(found, retryable=False) == 2

        unknown = await found.recipients(_S.UNKNOWN)
        assert ids(unknown) == ids(list(lost.recipients))
        assert {(r.error, r.lease_until) for r in unknown} == {(STOPPED, None)}
        assert [r.message_id for r in unknown] == [r.message_id for r in lost.recipients]
        assert await storage.recipients.record(lost, sent(lost), moment(60_002)) == 0
        assert await storage.recipients.lease(
            found.campaign_id, 10, now=moment(60_003), lease_until=moment(120_000)
        ) is None  # fmt: skip
        assert await storage.recipients.record(live, sent(live), moment(60_004)) == 1
        assert await found.counts() == CampaignCounts(sent=1, unknown=2)

    async def test_a_batch_marked_retryable_is_not_retried_once_that_is_unsafe(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 2)
        await found.lease()
        await expired(found, retryable=True)

        assert await expired(found, retryable=False) == 2
        assert await found.counts() == CampaignCounts(unknown=2)


class TestReleaseAndCancel:
    async def test_a_released_batch_is_pending_again_and_claimed_anew(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 2)
        batch = await found.lease()

        assert await storage.recipients.release(batch, moment(2)) == 2

        assert {(r.status, r.batch_id, r.message_id) for r in await found.recipients()} == {
            (_S.PENDING, None, None)
        }
        again = await found.lease(at=3)
        assert not again.retried
        assert again.batch_id != batch.batch_id
        new_ids = {r.message_id for r in again.recipients}
        assert not new_ids & {r.message_id for r in batch.recipients}
        assert await storage.recipients.record(batch, sent(batch), moment(4)) == 0

    async def test_a_retried_batch_given_back_stays_retryable_as_it_was(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 2)
        first = await found.lease()
        await expired(found, retryable=True)
        retried = await found.lease(at=70_000, lease=moment(130_000))

        assert await storage.recipients.release(retried, moment(70_001)) == 2

        third = await found.lease(at=70_002, lease=moment(130_000))
        assert third.retried
        assert [r.message_id for r in third.recipients] == [r.message_id for r in first.recipients]

    async def test_cancel_ends_the_pending_and_leaves_batches_being_sent(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 6)
        in_flight = await found.lease(limit=2)
        waiting = await found.lease(limit=1, lease=moment(10))
        await expired(found, retryable=True, at=moment(11))  # waiting: retryable now
        await found.set_status(CampaignStatus.CANCELLED)

        assert await storage.recipients.cancel_pending(found.campaign_id, moment(12)) == 4

        rest = [lead.lead_id for lead in found.leads[3:]]
        assert ids(await found.recipients(_S.CANCELLED)) == rest
        [unknown] = await found.recipients(_S.UNKNOWN)
        assert unknown.lead_id == waiting.recipients[0].lead_id
        assert unknown.error == CANCELLED_UNKNOWN
        assert await storage.recipients.record(in_flight, sent(in_flight), moment(13)) == 2
        assert await found.counts() == CampaignCounts(sent=2, unknown=1, cancelled=3)
        assert await storage.recipients.cancel_pending(found.campaign_id, moment(14)) == 0

    async def test_a_failed_campaigns_rest_is_cancelled_with_its_reason(
        self, storage: Storage
    ) -> None:
        found = await school(storage, 4)
        waiting = await found.lease(limit=1, lease=moment(10))
        await expired(found, retryable=True, at=moment(11))
        await found.set_status(CampaignStatus.FAILED)

        changed = await storage.recipients.cancel_pending(
            found.campaign_id, moment(12), failure="the template 'welcome' no longer exists"
        )

        assert changed == 4
        cancelled, unknown = stopped_errors("the template 'welcome' no longer exists")
        assert {r.error for r in await found.recipients(_S.CANCELLED)} == {cancelled}
        [gone] = await found.recipients(_S.UNKNOWN)
        assert (gone.lead_id, gone.error) == (waiting.recipients[0].lead_id, unknown)
        assert await found.counts() == CampaignCounts(unknown=1, cancelled=3)


# --- Postgres: many workers at once ------------------------------------------------------


@pytest.mark.postgres
async def test_claims_at_once_never_share_a_recipient(postgres_storage: Storage) -> None:
    storage = postgres_storage
    found = await school(storage, 200)
    assert storage.database is not None
    workers = [PiccoloRecipientRepository(storage.database) for _ in range(8)]

    async def work(recipients: PiccoloRecipientRepository) -> list[LeasedBatch]:
        taken: list[LeasedBatch] = []
        while batch := await recipients.lease(
            found.campaign_id, 7, now=moment(1), lease_until=LEASE
        ):
            taken.append(batch)
        return taken

    batches = [b for taken in await asyncio.gather(*map(work, workers)) for b in taken]

    leased = [r.lead_id for batch in batches for r in batch.recipients]
    assert len(leased) == len(set(leased)) == 200
    assert len({r.message_id for batch in batches for r in batch.recipients}) == 200
    assert len({batch.batch_id for batch in batches}) == len(batches)
    outcomes = [storage.recipients.record(b, sent(b), moment(2)) for b in batches]
    assert sum(await asyncio.gather(*outcomes)) == 200
    assert await found.counts() == CampaignCounts(sent=200)


@pytest.mark.postgres
async def test_a_retryable_batch_is_claimed_again_by_one_worker_only(
    postgres_storage: Storage,
) -> None:
    storage = postgres_storage
    assert storage.database is not None
    postgres = storage.database
    found = await school(storage, 30)
    first = [await found.lease(limit=10) for _ in range(3)]
    await expired(found, retryable=True)

    again = await asyncio.gather(
        *(
            PiccoloRecipientRepository(postgres).lease(
                found.campaign_id, 10, now=moment(70_000), lease_until=moment(130_000)
            )
            for _ in range(9)
        )
    )

    taken = [batch for batch in again if batch is not None]
    assert sorted(b.batch_id for b in taken) == sorted(b.batch_id for b in first)
    assert all(b.retried for b in taken)
    held = [r.lead_id for b in taken for r in b.recipients]
    assert len(held) == len(set(held)) == 30
    done = [storage.recipients.record(b, sent(b), moment(70_001)) for b in taken]
    assert sum(await asyncio.gather(*done)) == 30
    stale = [storage.recipients.record(b, sent(b), moment(70_002)) for b in first]
    assert sum(await asyncio.gather(*stale)) == 0
