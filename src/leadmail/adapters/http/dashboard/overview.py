"""The overview: the lead base and what the mail did over the last 30 days, drawn as
charts on the server (SVG), the suppression list by reason, and the campaigns running now
with their progress."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller, Request, get
from litestar.response import Template

from leadmail.adapters.http.dashboard.campaigns import progress_of
from leadmail.adapters.http.dashboard.pages import page
from leadmail.adapters.http.dashboard.security import session_of
from leadmail.domain.activity import OUTCOMES
from leadmail.domain.campaigns import CampaignStatus
from leadmail.services.activity import AccountActivity
from leadmail.services.campaigns import CampaignService

LATEST_CAMPAIGNS = 10
UNDER_WAY = (CampaignStatus.RUNNING, CampaignStatus.SCHEDULED, CampaignStatus.PAUSED)


class OverviewPage(Controller):
    path = "/"
    include_in_schema = False
    activity: ClassVar[AccountActivity]
    campaigns: ClassVar[CampaignService]

    @get("/")
    async def overview(self, request: Request[Any, Any, Any]) -> Template:
        account = session_of(request).user.account_id
        activity = await self.activity.overview(account)
        latest = await self.campaigns.list(account, LATEST_CAMPAIGNS)
        under_way = [v for v in latest.items if v.campaign.status in UNDER_WAY]
        return page(
            request,
            "overview.html",
            "overview",
            "Overview",
            activity=activity,
            outcomes=OUTCOMES,
            running=[(view, progress_of(view)) for view in under_way],
        )
