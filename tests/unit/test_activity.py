"""The overview's figures (domain/activity.py, services/activity.py) on the memory stores."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime

from leadmail.adapters.memory.activity import MemoryActivityCounts
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.activity import OUTCOMES, REASONS, Activity, days_back
from leadmail.services.activity import AccountActivity
from tests.contract.support import a_lead
from tests.unit.fakes import FakeClock


def test_the_days_are_the_last_30_utc_days_oldest_first() -> None:
    days = days_back(datetime(2026, 3, 10, 23, 30, tzinfo=UTC))

    assert len(days) == 30
    assert (days[0], days[-1]) == (date(2026, 2, 9), date(2026, 3, 10))
    assert all((b - a).days == 1 for a, b in itertools.pairwise(days))


def test_days_and_outcomes_with_nothing_are_zero_and_other_statuses_left_out() -> None:
    days = (date(2026, 3, 9), date(2026, 3, 10))

    activity = Activity.of(
        days,
        7,
        {date(2026, 3, 10): 2},
        {(date(2026, 3, 9), "delivered"): 3, (date(2026, 3, 9), "pending"): 9},
        {"bounced": 1},
    )

    assert activity.leads_added == (0, 2)
    assert activity.leads_in_period == 2
    assert activity.messages["delivered"] == (3, 0)
    assert set(activity.messages) == set(OUTCOMES)  # no "pending"
    assert activity.suppressions == dict.fromkeys(REASONS, 0) | {"bounced": 1}
    assert activity.busiest_day == 3
    assert Activity.of(days, 0, {}, {}, {}).busiest_day == 1  # a scale, never 0


async def test_the_service_counts_one_accounts_last_30_days() -> None:
    leads = MemoryLeadRepository()
    suppressions = MemorySuppressionRepository()
    counts = MemoryActivityCounts(leads, MemoryMessageRepository(suppressions), suppressions)
    now = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    await leads.add(
        a_lead("acc", email="old@example.com", created_at=datetime(2026, 1, 1, tzinfo=UTC))
    )
    await leads.add(a_lead("acc", email="new@example.com", created_at=now))
    await leads.add(a_lead("other", email="x@example.com", created_at=now))

    activity = await AccountActivity(counts, leads, FakeClock(now)).overview("acc")

    assert activity.leads_total == 2
    assert activity.leads_added[-1] == 1
    assert activity.leads_in_period == 1
