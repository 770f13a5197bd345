"""Campaigns: the list with status and progress; a new one (a template, an audience made
of the lead table's filters with a live count, variables, the sender, now, later or a
draft); a campaign's page with live counts, rate and time left, pause, resume, cancel and
start, and its recipients by status."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard import pages
from leadmail.adapters.http.dashboard.leads import segment_pairs
from leadmail.adapters.http.dashboard.pages import (
    field_errors,
    form_values,
    key_values,
    page,
    query_of,
    see_other,
)
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.campaigns import AudienceEmpty, CampaignStatus, RecipientStatus
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import TemplateNotFound, ValidationFailed
from leadmail.domain.segments import LeadFilter
from leadmail.services.campaign_checks import CampaignRequest
from leadmail.services.campaigns import CampaignService, CampaignView
from leadmail.services.leads import LeadService
from leadmail.services.templates import TemplateService

AnyRequest = Request[Any, Any, Any]
CAMPAIGNS = f"{DASHBOARD}/campaigns"
PAGE_SIZE = 25
RECIPIENTS_SHOWN = 50
FORM = ("name", "template_id", "variables", "sender", "reply_to", "send_at", "when")
ACTIONS = {"pause": "Paused.", "resume": "Resumed.", "cancel": "Cancelled.", "start": "Started."}


def progress_of(view: CampaignView) -> dict[str, Any]:
    """What a campaign's page shows, and what its script reads again every two seconds."""
    counts = view.counts
    return {
        "status": view.campaign.status.value,
        "total": f"{counts.total:,}",
        "total_value": counts.total,
        "sent": f"{counts.sent:,}",
        "sent_value": counts.sent,
        "done_value": counts.total - counts.pending,
        "pending": f"{counts.pending:,}",
        "failed": f"{counts.failed:,}",
        "skipped": f"{counts.skipped:,}",
        "suppressed": f"{counts.suppressed:,}",
        "cancelled": f"{counts.cancelled:,}",
        "rate": f"{view.rate_per_minute:,} a minute" if view.rate_per_minute else "—",
        "eta": f"{view.eta_seconds} s" if view.eta_seconds is not None else "—",
        "done": view.campaign.status.finished,
    }


class CampaignPages(Controller):
    path = "/campaigns"
    include_in_schema = False
    campaigns: ClassVar[CampaignService]
    templates: ClassVar[TemplateService]
    leads: ClassVar[LeadService]

    @get("/")
    async def listing(self, request: AnyRequest, cursor: FromQuery[str | None] = None) -> Template:
        account = session_of(request).user.account_id
        found = await self.campaigns.list(account, PAGE_SIZE, cursor)
        return page(
            request,
            "campaigns.html",
            "campaigns",
            "Campaigns",
            campaigns=[(view, progress_of(view)) for view in found.items],
            next_cursor=found.next_cursor,
        )

    @get("/new")
    async def new(self, request: AnyRequest) -> Template:
        return await self._form(request, dict.fromkeys(FORM, ""), {}, {})

    @get("/audience")
    async def audience_count(self, request: AnyRequest) -> dict[str, Any]:
        """How many leads the audience's filters select now (the form asks as they change)."""
        account = session_of(request).user.account_id
        query = query_of(request)
        try:
            segment = LeadFilter.parse(segment_pairs(query))
        except ValidationFailed as e:
            return {"count": "—", "error": e.described}
        count = await self.leads.count(account, segment, at_most=pages.COUNT_UP_TO + 1)
        return {"count": pages.shown_count(count, segment), "error": ""}

    @post("/")
    async def create(self, request: AnyRequest) -> Template | Redirect:
        account = session_of(request).user.account_id
        form = await request.form()
        values = form_values(form, *FORM)
        filters = form_values(form, "q", "tag", "source", "field_key", "field_value")
        # The audience as the API takes it (the filter form's names, then its JSON).
        try:
            audience = LeadFilter.parse(segment_pairs(filters)).to_json()
        except ValidationFailed as e:
            return await self._form(request, values, filters, field_errors(e))
        when = values["when"] or "now"
        try:
            view = await self.campaigns.create(
                account,
                CampaignRequest(
                    name=values["name"],
                    template_id=values["template_id"],
                    audience=audience,
                    variables=key_values(values["variables"]),
                    sender=values["sender"] or None,
                    reply_to=values["reply_to"] or None,
                    send_at=values["send_at"] or None if when == "later" else None,
                    draft=when == "draft",
                ),
            )
        except ValidationFailed as e:
            found = field_errors(e)
            if "from" in found:  # the API's name for the sender
                found["sender"] = found.pop("from")
            return await self._form(request, values, filters, found)
        except (TemplateNotFound, AudienceEmpty, SenderNotAllowed) as e:
            # The API's own words, by the field they are about.
            field = {TemplateNotFound: "template_id", AudienceEmpty: "audience"}.get(
                type(e), "sender"
            )
            return await self._form(request, values, filters, {field: e.message})
        return see_other(f"{CAMPAIGNS}/{view.campaign.campaign_id}", said="created")

    @get("/{campaign_id:str}")
    async def campaign(
        self,
        request: AnyRequest,
        campaign_id: FromPath[str],
        status: FromQuery[str | None] = None,
        said: FromQuery[str | None] = None,
    ) -> Template:
        account = session_of(request).user.account_id
        view = await self.campaigns.get(account, campaign_id)
        chosen = RecipientStatus(status) if status in set(RecipientStatus) else None
        recipients: list[Recipient] = []
        if view.campaign.status is not CampaignStatus.DRAFT:
            recipients = list(
                (
                    await self.campaigns.recipients(account, campaign_id, chosen, RECIPIENTS_SHOWN)
                ).items
            )
        notice = ACTIONS.get(said or "", "Campaign created." if said == "created" else "")
        return page(
            request,
            "campaign.html",
            "campaigns",
            view.campaign.name,
            view=view,
            shown=progress_of(view),
            recipients=recipients,
            status=chosen.value if chosen else "",
            statuses=[s.value for s in RecipientStatus if s is not RecipientStatus.SENDING],
            notice=notice,
        )

    @get("/{campaign_id:str}/progress")
    async def progress_json(
        self, request: AnyRequest, campaign_id: FromPath[str]
    ) -> dict[str, Any]:
        view = await self.campaigns.get(session_of(request).user.account_id, campaign_id)
        return progress_of(view)

    @post("/{campaign_id:str}/{action:str}")
    async def act(
        self, request: AnyRequest, campaign_id: FromPath[str], action: FromPath[str]
    ) -> Redirect:
        account = session_of(request).user.account_id
        change = {
            "pause": self.campaigns.pause,
            "resume": self.campaigns.resume,
            "cancel": self.campaigns.cancel,
            "start": self.campaigns.start,
        }.get(action)
        if change is None:
            raise ValidationFailed.one("action", "must be pause, resume, cancel or start")
        await change(account, campaign_id)  # CampaignStateConflict: a 409 page
        return see_other(f"{CAMPAIGNS}/{campaign_id}", said=action)

    async def _form(
        self,
        request: AnyRequest,
        values: dict[str, str],
        filters: dict[str, str],
        errors: dict[str, str],
    ) -> Template:
        account = session_of(request).user.account_id
        templates = [t for t in await self.templates.list(account) if t.kind.value == "template"]
        return page(
            request,
            "campaign_form.html",
            "campaigns",
            "New campaign",
            status_code=422 if errors else 200,
            values=values,
            filters=filters,
            errors=errors,
            templates=templates,
        )
