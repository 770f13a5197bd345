"""The ActivityCounts contract (ports/activity.py), run against every adapter: leads and
messages counted by UTC day from a day on, messages by their status now, suppressions by
reason, one account's only; and the counts following the rows as they change (a lead
deleted, a message sent or failed), with an account's lead total (LeadRepository.count of
no filter, which the SQL stores keep as a count too)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta

from leadmail.domain.campaigns import HANDED_BACK
from leadmail.domain.email import MessageStatus
from leadmail.domain.segments import LeadFilter
from leadmail.domain.suppressions import Suppression, SuppressionReason
from tests.contract.support import Storage, a_lead, a_message

DAY = datetime(2026, 3, 10, tzinfo=UTC)  # midnight, UTC
FIRST_DAY = DAY.date()


def at(days: int, hours: float = 12) -> datetime:
    return DAY + timedelta(days=days, hours=hours)


class TestActivityCountsContract:
    async def test_leads_are_counted_by_utc_day_from_the_moment_on(self, storage: Storage) -> None:
        account = await storage.new_account()
        other = await storage.new_account()
        moments = [at(-1), at(0, 0.001), at(0, 23.99), at(1), at(1), at(1)]
        for i, moment in enumerate(moments):
            await storage.leads.add(a_lead(account, email=f"l{i}@example.com", created_at=moment))
        await storage.leads.add(a_lead(other, email="x@example.com", created_at=at(1)))

        counted = await storage.activity.leads_per_day(account, FIRST_DAY)

        assert counted == {date(2026, 3, 10): 2, date(2026, 3, 11): 3}

    async def test_messages_are_counted_by_day_and_status(self, storage: Storage) -> None:
        account = await storage.new_account()
        other = await storage.new_account()
        made = [
            (at(0), MessageStatus.SENT),
            (at(0), MessageStatus.DELIVERED),
            (at(0), MessageStatus.DELIVERED),
            (at(1), MessageStatus.BOUNCED),
            (at(1), MessageStatus.FAILED),
            (at(-3), MessageStatus.SENT),  # before the moment
        ]
        await storage.messages.add(
            [
                dataclasses.replace(a_message(account, created_at=moment), status=status)
                for moment, status in made
            ]
        )
        await storage.messages.add([a_message(other, created_at=at(0))])
        handed_back = a_message(account, created_at=at(0)).failed(HANDED_BACK, 1, at(0))
        await storage.messages.add([handed_back])  # never sent: no outcome

        counted = await storage.activity.messages_per_day(account, FIRST_DAY)

        assert counted == {
            (date(2026, 3, 10), "sent"): 1,
            (date(2026, 3, 10), "delivered"): 2,
            (date(2026, 3, 11), "bounced"): 1,
            (date(2026, 3, 11), "failed"): 1,
        }

    async def test_suppressions_are_counted_by_reason(self, storage: Storage) -> None:
        account = await storage.new_account()
        other = await storage.new_account()
        reasons = [SuppressionReason.BOUNCED] * 2 + [SuppressionReason.MANUAL]
        for i, reason in enumerate(reasons):
            await storage.suppressions.add(
                Suppression.of(account, f"s{i}@example.com", reason, at(0))
            )
        await storage.suppressions.add(
            Suppression.of(other, "o@example.com", SuppressionReason.COMPLAINED, at(0))
        )

        assert await storage.activity.suppressions_by_reason(account) == {
            "bounced": 2,
            "manual": 1,
        }
        assert await storage.activity.suppressions_by_reason(await storage.new_account()) == {}

    async def test_a_deleted_lead_leaves_its_day_and_the_total(self, storage: Storage) -> None:
        account = await storage.new_account()
        leads = [
            await storage.leads.add(a_lead(account, email=f"d{i}@example.com", created_at=at(0)))
            for i in range(3)
        ]
        await storage.leads.add(a_lead(account, email="late@example.com", created_at=at(1)))
        everyone = LeadFilter()
        assert await storage.leads.count(account, everyone) == 4

        assert await storage.leads.delete(account, leads[0].lead_id)
        assert await storage.leads.delete(account, leads[1].lead_id)

        assert await storage.activity.leads_per_day(account, FIRST_DAY) == {
            date(2026, 3, 10): 1,
            date(2026, 3, 11): 1,
        }
        assert await storage.leads.count(account, everyone) == 2
        assert await storage.leads.count(await storage.new_account(), everyone) == 0

    async def test_a_message_is_counted_under_its_status_now(self, storage: Storage) -> None:
        account = await storage.new_account()
        first, second, third = (a_message(account, created_at=at(0)) for _ in range(3))
        await storage.messages.add([first, second, third])
        assert await storage.activity.messages_per_day(account, FIRST_DAY) == {}  # pending

        sent = first.sent("provider-1", 1, at(0, 13))
        await storage.messages.update(
            [sent, second.failed("refused", 1, at(0, 13)), third.failed(HANDED_BACK, 1, at(0))]
        )
        await storage.messages.update([sent.sent("provider-1", 2, at(0, 14))])  # no change

        assert await storage.activity.messages_per_day(account, FIRST_DAY) == {
            (date(2026, 3, 10), "sent"): 1,
            (date(2026, 3, 10), "failed"): 1,
        }

    async def test_a_segment_is_counted_up_to_at_most_and_the_total_exactly(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        for i in range(3):
            await storage.leads.add(
                a_lead(account, email=f"c{i}@example.com", created_at=at(0), tags=("vip",))
            )
        vip = LeadFilter.parse([("tag", "vip")])

        assert await storage.leads.count(account, vip, at_most=2) == 2
        assert await storage.leads.count(account, vip, at_most=5) == 3
        assert await storage.leads.count(account, vip) == 3
        assert await storage.leads.count(account, LeadFilter(), at_most=1) == 3
