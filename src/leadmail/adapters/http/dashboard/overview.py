"""The overview: the lead base at a glance, and the latest campaigns with their progress."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from litestar import Controller, Request, get
from litestar.response import Template

from leadmail.adapters.http.dashboard.pages import page
from leadmail.adapters.http.dashboard.security import session_of
from leadmail.domain.segments import LeadFilter
from leadmail.services.campaigns import CampaignService
from leadmail.services.leads import LeadService
from leadmail.services.suppressions import SuppressionList

LATEST_CAMPAIGNS = 5


class OverviewPage(Controller):
    path = "/"
    include_in_schema = False
    leads: ClassVar[LeadService]
    campaigns: ClassVar[CampaignService]
    suppressions: ClassVar[SuppressionList]

    @get("/")
    async def overview(self, request: Request[Any, Any, Any]) -> Template:
        account = session_of(request).user.account_id
        week_ago = datetime.now(UTC) - timedelta(days=7)
        since = week_ago.isoformat().replace("+00:00", "Z")
        total = await self.leads.count(account, LeadFilter())
        this_week = await self.leads.count(account, LeadFilter.parse([("created_after", since)]))
        latest = await self.campaigns.list(account, LATEST_CAMPAIGNS)
        return page(
            request,
            "overview.html",
            "overview",
            "Overview",
            total=total,
            this_week=this_week,
            campaigns=latest.items,
        )
