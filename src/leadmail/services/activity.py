"""The overview's figures: an account's last 30 days at a glance."""

from __future__ import annotations

import asyncio

from leadmail.domain.activity import Activity, days_back
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
        """The four counts at once (on Postgres, each on a connection of its own: the page
        waits for the longest, not for their sum). Every lead of the account is
        ``LeadRepository.count`` of no filter, which storage keeps as a count."""
        days = days_back(self._clock())
        since = days[0]
        total, leads, messages, suppressions = await asyncio.gather(
            self._leads.count(account_id, LeadFilter()),
            self._counts.leads_per_day(account_id, since),
            self._counts.messages_per_day(account_id, since),
            self._counts.suppressions_by_reason(account_id),
        )
        return Activity.of(days, total, leads, messages, suppressions)
