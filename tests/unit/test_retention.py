"""Retention (domain/retention.py, services/retention.py) on the memory stores: the cutoffs
from the service's clock, a kind drained a batch at a time with the batch's size following
how long the last one took, what the report and the progress say, and 0 days keeping
messages while claims still go."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.bootstrap import Adapters
from leadmail.domain.email import Message
from leadmail.domain.retention import (
    BATCH_TARGET_S,
    BatchSize,
    Cutoffs,
    MessageBatch,
    Purged,
    PurgeReport,
    RetentionPolicy,
)
from leadmail.services.retention import Retention
from tests.contract.support import a_claim, a_message

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def test_the_cutoffs_are_24_hours_the_retention_days_and_7_days_back() -> None:
    assert RetentionPolicy(90).cutoffs(NOW) == Cutoffs(
        claims=NOW - timedelta(hours=24),
        messages=NOW - timedelta(days=90),
        job_log=NOW - timedelta(days=7),
    )
    assert RetentionPolicy(0).cutoffs(NOW).messages is None  # 0: kept for ever


def test_negative_retention_days_are_refused() -> None:
    with pytest.raises(ValueError, match="0 \\(keep\\) or more"):
        RetentionPolicy(-1)


def test_a_batch_size_aims_at_the_target_growing_by_half_at_most() -> None:
    size = BatchSize(current=400, least=50, most=1000)

    assert size.after(BATCH_TARGET_S * 2) == 200  # twice too slow: half
    assert size.after(BATCH_TARGET_S) == 200  # on target: kept
    assert size.after(BATCH_TARGET_S / 1.25) == 250
    assert size.after(0.0) == 375  # however quick: half again at most
    assert size.after(BATCH_TARGET_S / 100) == 562
    for _ in range(5):
        size.after(0.0)
    assert size.current == 1000  # at most `most`
    assert size.after(BATCH_TARGET_S * 10) == 250  # far too slow: a quarter at most
    for _ in range(5):
        size.after(1.0)
    assert size.current == 50  # at least `least`


def test_a_report_totals_rows_removed_not_recipients_kept() -> None:
    report = PurgeReport()
    report.count(Purged.MESSAGES, 3)
    report.count(Purged.EVENTS, 2)
    report.count(Purged.UNLINKED, 3)
    report.timed(Purged.MESSAGES, 0.01)
    report.timed(Purged.MESSAGES, 0.03)
    report.timed(Purged.CLAIMS, 0.02)

    assert report.total == 5
    assert (report.batches, report.longest_batch_s) == (3, 0.03)
    assert report.longest_of == {Purged.MESSAGES: 0.03, Purged.CLAIMS: 0.02}


class Rig:
    def __init__(self, days: int = 90) -> None:
        self.adapters = Adapters.in_memory()
        self.retention = Retention(self.adapters.retention, RetentionPolicy(days), lambda: NOW)

    async def message(self, account_id: str, age: timedelta) -> Message:
        message = a_message(account_id, created_at=NOW - age)
        await self.adapters.messages.add([message])
        return message


async def test_a_purge_removes_every_kind_past_its_time_and_reports_it() -> None:
    rig = Rig()
    claims = rig.adapters.claims
    await claims.claim(a_claim("acc_a", created_at=NOW - timedelta(hours=25)))
    fresh = await claims.claim(a_claim("acc_a", created_at=NOW - timedelta(hours=23)))
    old = [await rig.message(account, timedelta(days=91)) for account in ("acc_a", "acc_b")]
    kept = await rig.message("acc_a", timedelta(days=89))
    heard: list[tuple[Purged, int]] = []

    report = await rig.retention.purge(lambda kind, n: heard.append((kind, n)))

    assert report.removed[Purged.CLAIMS] == 1
    assert report.removed[Purged.MESSAGES] == 2
    assert report.total == 3
    assert heard == [(Purged.CLAIMS, 1), (Purged.MESSAGES, 1), (Purged.MESSAGES, 1)]
    messages = rig.adapters.messages
    assert [await messages.get(m.account_id, m.message_id) for m in old] == [None, None]
    assert await messages.get("acc_a", kept.message_id) == kept
    again = await claims.claim(dataclasses.replace(a_claim("acc_a", key=fresh.key), created_at=NOW))
    assert again.token == fresh.token  # the claim of 23 hours ago is still the one held


async def test_0_retention_days_keep_messages_while_claims_still_go() -> None:
    rig = Rig(days=0)
    await rig.adapters.claims.claim(a_claim("acc_a", created_at=NOW - timedelta(days=2)))
    ancient = await rig.message("acc_a", timedelta(days=3650))

    report = await rig.retention.purge()

    assert (report.removed[Purged.CLAIMS], report.removed[Purged.MESSAGES]) == (1, 0)
    assert await rig.adapters.messages.get("acc_a", ancient.message_id) == ancient


class CountingStore:
    """A store of ``rows`` old claims whose batches take ``took_s`` each (as timed by the
    service), recording the sizes asked."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.asked: list[int] = []

    async def purge_claims(self, before: datetime, limit: int) -> int:
        self.asked.append(limit)
        taken = min(limit, self.rows)
        self.rows -= taken
        return taken

    async def accounts_with_messages(self, before: datetime) -> list[str]:
        return []

    async def purge_messages(self, account_id: str, before: datetime, limit: int) -> MessageBatch:
        return MessageBatch()

    async def purge_job_log(self, before: datetime, limit: int) -> int:
        return 0

    async def purge_import_files(self, limit: int) -> int:
        return 0

    async def purge_import_errors(self, before: datetime, limit: int) -> int:
        return 0

    async def purge_action_members(self, limit: int) -> int:
        return 0


async def test_fast_batches_grow_and_the_kind_ends_at_the_first_short_one() -> None:
    store = CountingStore(rows=3_500)

    report = await Retention(store, RetentionPolicy(90), lambda: NOW).purge()

    assert report.removed[Purged.CLAIMS] == 3_500
    # In memory every batch is fast: each half again the last, the last one short.
    assert store.asked == [500, 750, 1_125, 1_687]
    assert report.batches == 4 + 4  # and one empty batch of each other kind
