"""/api/v1/leads: the calling account's own lead database."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Request, delete, get, post, put
from litestar.params import JSONBody, Parameter

from leadmail.adapters.http import segments as s
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    DeletedLeadEnvelope,
    LeadCountEnvelope,
    LeadEnvelope,
    LeadPageEnvelope,
    TimelineEnvelope,
)
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import LeadCursor, Limit
from leadmail.adapters.http.path_ids import LeadId
from leadmail.adapters.http.schemas import (
    CountOut,
    DeletedOut,
    LeadIn,
    LeadOut,
    LeadPageOut,
    LeadPatchIn,
    TagsIn,
    given_fields,
)
from leadmail.adapters.http.timeline_schemas import TimelineOut
from leadmail.domain.errors import LeadNotFound, ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import (
    DEFAULT_PAGE_SIZE,
    LeadQuery,
)
from leadmail.domain.leads import LeadChanges, LeadFields
from leadmail.domain.tags import TagChange
from leadmail.ports.errors import DuplicateLead
from leadmail.services.lead_timeline import LeadTimeline
from leadmail.services.leads import LeadService

AuthedRequest = Request[Principal, Any, Any]
TIMELINE_TEXT = (
    "Each entry has `at`, `kind` and `detail`: `created`; `updated` (`detail.fields`: the"
    " fields it changed, custom ones as `fields.<key>`); `tags_changed` (`detail.add`,"
    " `detail.remove`, as asked); `imported` (`detail.import_id`, `detail.created`: the"
    " import created the lead, or updated it); `message` (a message sent to the lead's"
    " address as it is now, in `message`, as getMessage gives it, with its events and"
    " its `campaign_id` when a campaign sent it); `suppressed` (`detail.reason`, and the"
    " `message_id` or `campaign_id` it came from). Cursor pagination: pass `next_cursor`"
    " back as `cursor` until it is null; `limit` is 1-100. Another account's lead: 404."
)


class LeadController(DiscoverableController):
    """Litestar makes one instance of a controller per app; build_app gives it the service
    (bound_controller), so no handler resolves a dependency per request."""

    path = "/api/v1/leads"
    tags = ["leads"]
    leads: ClassVar[LeadService]
    timeline: ClassVar[LeadTimeline]

    collection_options = options_for("/", "GET", "POST")
    count_options = options_for("/count", "GET")
    item_options = options_for("/{lead_id:str}", "GET", "PUT", "DELETE")
    tags_options = options_for("/{lead_id:str}/tags", "POST")
    timeline_options = options_for("/{lead_id:str}/timeline", "GET")

    @post(
        "/",
        status_code=200,
        summary="Add a lead",
        operation_id="addLead",
        responses=error_responses(ValidationFailed, DuplicateLead, body=True),
    )
    async def add_lead(self, request: AuthedRequest, data: JSONBody[LeadIn]) -> LeadEnvelope:
        fields = LeadFields.parse(**msgspec.structs.asdict(data))
        lead = await self.leads.add(request.user.account_id, fields)
        return LeadEnvelope.of("Lead added", LeadOut.of(lead))

    @get(
        "/",
        summary="List leads, newest first",
        description=(
            "Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100. "
            + s.SEGMENT_TEXT
        ),
        operation_id="listLeads",
        responses=error_responses(ValidationFailed),
        opt=s.SEGMENT_OPT,
    )
    async def list_leads(
        self,
        request: AuthedRequest,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: LeadCursor = None,
        tag: s.Tag = None,
        any_tag: s.AnyTag = None,
        not_tag: s.NotTag = None,
        email: s.Email = None,
        source: s.Source = None,
        phone: s.Phone = None,
        created_after: s.CreatedAfter = None,
        created_before: s.CreatedBefore = None,
        q: s.Search = None,
    ) -> LeadPageEnvelope:
        # The segment as sent (segments.py); the parameters above document it.
        pairs = s.query_pairs(request, paging=True)
        query = LeadQuery.parse(limit=limit, cursor=cursor, segment=pairs)
        page = await self.leads.list(request.user.account_id, query)
        return LeadPageEnvelope.of("Leads retrieved", LeadPageOut.of(page))

    @get(
        "/count",
        summary="Count leads",
        description="How many leads of your account the filters select. " + s.SEGMENT_TEXT,
        operation_id="countLeads",
        responses=error_responses(ValidationFailed),
        opt=s.SEGMENT_OPT,
    )
    async def count_leads(
        self,
        request: AuthedRequest,
        tag: s.Tag = None,
        any_tag: s.AnyTag = None,
        not_tag: s.NotTag = None,
        email: s.Email = None,
        source: s.Source = None,
        phone: s.Phone = None,
        created_after: s.CreatedAfter = None,
        created_before: s.CreatedBefore = None,
        q: s.Search = None,
    ) -> LeadCountEnvelope:
        count = await self.leads.count(request.user.account_id, s.segment_of(request))
        return LeadCountEnvelope.of("Leads counted", CountOut(count=count))

    @get(
        "/{lead_id:str}",
        summary="Get a lead",
        operation_id="getLead",
        responses=error_responses(LeadNotFound),
    )
    async def get_lead(self, request: AuthedRequest, lead_id: LeadId) -> LeadEnvelope:
        lead = await self.leads.get(request.user.account_id, lead_id)
        return LeadEnvelope.of("Lead retrieved", LeadOut.of(lead))

    @put(
        "/{lead_id:str}",
        summary="Update a lead (partial: omitted fields stay as they are)",
        description=(
            "`tags` replaces the lead's set; `fields` is merged into its custom fields key"
            " by key, and a key set to null is removed."
        ),
        operation_id="updateLead",
        responses=error_responses(ValidationFailed, LeadNotFound, DuplicateLead, body=True),
    )
    async def update_lead(
        self,
        request: AuthedRequest,
        lead_id: LeadId,
        data: JSONBody[LeadPatchIn],
    ) -> LeadEnvelope:
        changes = LeadChanges.parse(**given_fields(data))
        lead = await self.leads.update(request.user.account_id, lead_id, changes)
        return LeadEnvelope.of("Lead updated", LeadOut.of(lead))

    @get(
        "/{lead_id:str}/timeline",
        summary="What happened to a lead, newest first",
        description=TIMELINE_TEXT,
        operation_id="getLeadTimeline",
        responses=error_responses(LeadNotFound, ValidationFailed),
    )
    async def get_timeline(
        self,
        request: AuthedRequest,
        lead_id: LeadId,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(description="`next_cursor` of the previous page, as it came"),
        ] = None,
    ) -> TimelineEnvelope:
        page = await self.timeline.page(request.user.account_id, lead_id, limit, cursor)
        return TimelineEnvelope.of("Timeline retrieved", TimelineOut.of(lead_id, page))

    @post(
        "/{lead_id:str}/tags",
        status_code=200,
        summary="Add and remove tags",
        description=(
            "Both lists at once, atomically: concurrent changes of the same lead all land."
            " A tag in both lists ends up removed; empty lists change nothing. A lead left"
            " with more than 50 tags: 422, nothing changed."
        ),
        operation_id="changeLeadTags",
        responses=error_responses(ValidationFailed, LeadNotFound, body=True),
    )
    async def change_tags(
        self, request: AuthedRequest, lead_id: LeadId, data: JSONBody[TagsIn]
    ) -> LeadEnvelope:
        change = TagChange.parse(data.add, data.remove)
        lead = await self.leads.change_tags(request.user.account_id, lead_id, change)
        return LeadEnvelope.of("Tags changed", LeadOut.of(lead))

    @delete(
        "/{lead_id:str}",
        status_code=200,
        summary="Delete a lead",
        operation_id="deleteLead",
        responses=error_responses(LeadNotFound),
    )
    async def delete_lead(self, request: AuthedRequest, lead_id: LeadId) -> DeletedLeadEnvelope:
        await self.leads.delete(request.user.account_id, lead_id)
        return DeletedLeadEnvelope.of("Lead deleted", DeletedOut(lead_id=lead_id))
