"""/api/v1/campaigns: one template to a whole segment, sent in the background."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, delete, get, post, put
from litestar.params import JSONBody, Parameter

from leadmail.adapters.http.campaign_schemas import (
    CampaignChangeIn,
    CampaignIn,
    CampaignOut,
    CampaignPageOut,
    RecipientPageOut,
    RecipientStatusOut,
)
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    CampaignEnvelope,
    CampaignPageEnvelope,
    DeletedCampaignEnvelope,
    DeletedCampaignOut,
    RecipientPageEnvelope,
)
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import Limit
from leadmail.adapters.http.path_ids import CampaignId
from leadmail.domain.campaigns import (
    AudienceEmpty,
    CampaignNotFound,
    CampaignStateConflict,
    RecipientStatus,
)
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import TemplateNotFound, ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE
from leadmail.domain.quotas import QuotaExceeded
from leadmail.services.campaigns import CampaignService

AuthedRequest = Request[Principal, Any, Any]
CREATE_TEXT = (
    "`audience` is a segment as a JSON object, the filters of listLeads by the same names"
    " (`{}`: every lead); each lead fills the template's variables with its own (`name`,"
    " `first_name`, `email`, `source`, custom fields by key), and `variables` fills what a"
    " lead lacks (the lead's own value wins). It starts at once, at `send_at` (a time past:"
    " at once), or stays `draft` until startCampaign. Refused, with nothing stored: an"
    " unknown template (404), an audience matching no lead (422 `AUDIENCE_EMPTY`), a"
    " template variable that neither `variables` nor any lead of the audience can supply"
    " (422 naming `variables.<name>`), a `from` or `reply_to` the account may not use (403"
    " `SENDER_NOT_ALLOWED`: outside its sender domains, or, for an account with none, a"
    " `from` outside the service's allowed domains), a display name holding `@` (422"
    " naming the field). A lead without such a variable is `skipped`."
)
ACTION_TEXT = (
    "Statuses an action applies to: start (draft), pause (scheduled or running), resume"
    " (paused), cancel (draft, scheduled, running or paused), update (draft or scheduled),"
    " delete (draft); any other: 409 `CAMPAIGN_STATE` naming the current status."
)
UPDATE_TEXT = (
    "Partial: the fields of createCampaign but `draft`, any subset (at least one); omitted"
    " ones stay as they are, and null clears `reply_to` and `send_at` (and gives `from` the"
    " default sender). The result is checked as a creation is, and nothing changes when a"
    " check fails. A draft stays a draft. A scheduled campaign is started again with its new"
    " body: its audience is frozen anew from the leads as they are now, and it waits for its"
    " `send_at`, or runs at once when that is null or past. "
)
_STATE = (CampaignNotFound, CampaignStateConflict)


class CampaignController(DiscoverableController):
    path = "/api/v1/campaigns"
    tags = ["campaigns"]
    campaigns: ClassVar[CampaignService]

    collection_options = options_for("/", "GET", "POST")
    item_options = options_for("/{campaign_id:str}", "GET", "PUT", "DELETE")
    start_options = options_for("/{campaign_id:str}/start", "POST")
    pause_options = options_for("/{campaign_id:str}/pause", "POST")
    resume_options = options_for("/{campaign_id:str}/resume", "POST")
    cancel_options = options_for("/{campaign_id:str}/cancel", "POST")
    recipients_options = options_for("/{campaign_id:str}/recipients", "GET")

    @post(
        "/",
        status_code=201,
        summary="Create a campaign",
        description=CREATE_TEXT,
        operation_id="createCampaign",
        responses=error_responses(
            ValidationFailed, TemplateNotFound, AudienceEmpty, SenderNotAllowed, body=True
        ),
    )
    async def create_campaign(
        self, request: AuthedRequest, data: JSONBody[CampaignIn]
    ) -> CampaignEnvelope:
        view = await self.campaigns.create(request.user.account_id, data.request())
        return CampaignEnvelope.of("Campaign created", CampaignOut.of(view))

    @get(
        "/",
        summary="List campaigns, newest first",
        description="Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100.",
        operation_id="listCampaigns",
        responses=error_responses(ValidationFailed),
    )
    async def list_campaigns(
        self,
        request: AuthedRequest,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None, Parameter(description="`next_cursor` of the previous page, as it came")
        ] = None,
    ) -> CampaignPageEnvelope:
        page = await self.campaigns.list(request.user.account_id, limit, cursor)
        return CampaignPageEnvelope.of("Campaigns retrieved", CampaignPageOut.of(page))

    @get(
        "/{campaign_id:str}",
        summary="Get a campaign, its counts and its pace",
        description=(
            "`counts` always add up to `total` (before the start: the leads the audience"
            " matches now, all pending); `rate_per_minute` is recipients sent in the last"
            " minute; `eta_seconds` the time left at that pace while running."
        ),
        operation_id="getCampaign",
        responses=error_responses(CampaignNotFound),
    )
    async def get_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> CampaignEnvelope:
        view = await self.campaigns.get(request.user.account_id, campaign_id)
        return CampaignEnvelope.of("Campaign retrieved", CampaignOut.of(view))

    @put(
        "/{campaign_id:str}",
        summary="Change a draft or scheduled campaign",
        description=UPDATE_TEXT + ACTION_TEXT,
        operation_id="updateCampaign",
        responses=error_responses(
            *_STATE,
            ValidationFailed,
            TemplateNotFound,
            AudienceEmpty,
            SenderNotAllowed,
            body=True,
        ),
    )
    async def update_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId, data: JSONBody[CampaignChangeIn]
    ) -> CampaignEnvelope:
        view = await self.campaigns.edit(request.user.account_id, campaign_id, data.edit())
        return CampaignEnvelope.of("Campaign updated", CampaignOut.of(view))

    @delete(
        "/{campaign_id:str}",
        status_code=200,
        summary="Delete a draft campaign",
        description="A campaign that has started is history: cancel it instead. " + ACTION_TEXT,
        operation_id="deleteCampaign",
        responses=error_responses(*_STATE),
    )
    async def delete_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> DeletedCampaignEnvelope:
        await self.campaigns.delete(request.user.account_id, campaign_id)
        return DeletedCampaignEnvelope.of("Campaign deleted", DeletedCampaignOut(id=campaign_id))

    @post(
        "/{campaign_id:str}/start",
        status_code=200,
        summary="Start a draft campaign",
        description="The checks of createCampaign again, then the audience is frozen. "
        + ACTION_TEXT,
        operation_id="startCampaign",
        responses=error_responses(
            *_STATE, TemplateNotFound, AudienceEmpty, ValidationFailed, SenderNotAllowed
        ),
    )
    async def start_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> CampaignEnvelope:
        view = await self.campaigns.start(request.user.account_id, campaign_id)
        return CampaignEnvelope.of("Campaign started", CampaignOut.of(view))

    @post(
        "/{campaign_id:str}/pause",
        status_code=200,
        summary="Pause a campaign",
        description=ACTION_TEXT,
        operation_id="pauseCampaign",
        responses=error_responses(*_STATE),
    )
    async def pause_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> CampaignEnvelope:
        view = await self.campaigns.pause(request.user.account_id, campaign_id)
        return CampaignEnvelope.of("Campaign paused", CampaignOut.of(view))

    @post(
        "/{campaign_id:str}/resume",
        status_code=200,
        summary="Resume a paused campaign",
        description="It goes on with its pending recipients only. While the account's"
        " daily quota is used up (or the campaign was paused by it today: `paused_reason`"
        " `quota`), 429 `QUOTA_EXCEEDED`: it resumes by itself when the next UTC day begins. "
        + ACTION_TEXT,
        operation_id="resumeCampaign",
        responses=error_responses(*_STATE, QuotaExceeded),
    )
    async def resume_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> CampaignEnvelope:
        view = await self.campaigns.resume(request.user.account_id, campaign_id)
        return CampaignEnvelope.of("Campaign resumed", CampaignOut.of(view))

    @post(
        "/{campaign_id:str}/cancel",
        status_code=200,
        summary="Cancel a campaign",
        description="Its pending recipients become `cancelled`. " + ACTION_TEXT,
        operation_id="cancelCampaign",
        responses=error_responses(*_STATE),
    )
    async def cancel_campaign(
        self, request: AuthedRequest, campaign_id: CampaignId
    ) -> CampaignEnvelope:
        view = await self.campaigns.cancel(request.user.account_id, campaign_id)
        return CampaignEnvelope.of("Campaign cancelled", CampaignOut.of(view))

    @get(
        "/{campaign_id:str}/recipients",
        summary="List a campaign's recipients",
        description=(
            "In lead id order, once the campaign has started (a draft has none); cursor"
            " pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100. A"
            " recipient's `message_id` opens at getMessage once its outcome is known."
        ),
        operation_id="listCampaignRecipients",
        responses=error_responses(CampaignNotFound, ValidationFailed),
    )
    async def list_recipients(
        self,
        request: AuthedRequest,
        campaign_id: CampaignId,
        status: Annotated[
            RecipientStatusOut | None, Parameter(description="Only the recipients of this status")
        ] = None,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(description="`next_cursor` of the previous page: the last lead id shown"),
        ] = None,
    ) -> RecipientPageEnvelope:
        wanted = _status_of(request)  # as sent: the parameter above documents it
        page = await self.campaigns.recipients(
            request.user.account_id, campaign_id, wanted, limit, cursor
        )
        return RecipientPageEnvelope.of("Recipients retrieved", RecipientPageOut.of(page))


def _status_of(request: AuthedRequest) -> RecipientStatus | None:
    given = request.query_params.getall("status", [])
    if not given:
        return None
    if len(given) > 1:
        raise ValidationFailed.one("status", "may be given only once")
    shown = {str(s.shown) for s in RecipientStatus}
    if given[0] not in shown:
        raise ValidationFailed.one("status", f"must be one of {', '.join(sorted(shown))}")
    return RecipientStatus(given[0])
