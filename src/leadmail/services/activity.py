"""The overview's figures: an account's last 30 days at a glance."""

from __future__ import annotations

from leadmail.domain.activity import Activity, days_back, start_of
from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.segments import LeadFilter
from leadmail.ports.activity import ActivityCounts
from leadmail.ports.leads import LeadRepository


class AccountActivity:
    def __init__(self, counts: ActivityCounts, leads: LeadRepository, clock: Clock = utc_now):
        self._counts = counts
        self._leads = leads
        self._clock = clock

    async def overview(self, account_id: str) -> Activity:
        days = days_back(self._clock())
        since = start_of(days[0])
        return Activity.of(
            days,
            await self._leads.count(account_id, LeadFilter()),
            await self._counts.leads_per_day(account_id, since),
            await self._counts.messages_per_day(account_id, since),
            await self._counts.suppressions_by_reason(account_id),
        )
