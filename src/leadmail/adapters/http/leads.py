"""/api/v1/leads: the calling account's own lead database."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, delete, get, post, put
from litestar.params import FromPath, FromQuery, JSONBody, Parameter

from leadmail.adapters.http.discovery import options_for
from leadmail.adapters.http.envelopes import (
    DeletedLeadEnvelope,
    LeadEnvelope,
    LeadPageEnvelope,
)
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.schemas import (
    DeletedOut,
    LeadIn,
    LeadOut,
    LeadPageOut,
    LeadPatchIn,
    given_fields,
)
from leadmail.domain.errors import LeadNotFound, ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    LeadQuery,
)
from leadmail.domain.leads import LeadChanges, LeadFields
from leadmail.ports.errors import DuplicateLead
from leadmail.services.leads import LeadService

AuthedRequest = Request[Principal, Any, Any]


class LeadController(Controller):
    """Litestar makes one instance of a controller per app; build_app gives it the service
    (bound_controller), so no handler resolves a dependency per request."""

    path = "/api/v1/leads"
    tags = ["leads"]
    leads: ClassVar[LeadService]

    collection_options = options_for("/", "GET", "POST")
    item_options = options_for("/{lead_id:str}", "GET", "PUT", "DELETE")

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
        description="Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100.",
        operation_id="listLeads",
        responses=error_responses(ValidationFailed),
    )
    async def list_leads(
        self,
        request: AuthedRequest,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(
                description=(
                    "`next_cursor` of the previous page, as it came: a position,"
                    " `<microseconds since 1970>.<lead id>`, after which the page starts"
                ),
            ),
        ] = None,
        email: FromQuery[str | None] = None,
        source: FromQuery[str | None] = None,
        phone: FromQuery[str | None] = None,
    ) -> LeadPageEnvelope:
        query = LeadQuery.parse(limit=limit, cursor=cursor, email=email, source=source, phone=phone)
        page = await self.leads.list(request.user.account_id, query)
        return LeadPageEnvelope.of("Leads retrieved", LeadPageOut.of(page))

    @get(
        "/{lead_id:str}",
        summary="Get a lead",
        operation_id="getLead",
        responses=error_responses(LeadNotFound),
    )
    async def get_lead(self, request: AuthedRequest, lead_id: FromPath[str]) -> LeadEnvelope:
        lead = await self.leads.get(request.user.account_id, lead_id)
        return LeadEnvelope.of("Lead retrieved", LeadOut.of(lead))

    @put(
        "/{lead_id:str}",
        summary="Update a lead (partial: omitted fields stay as they are)",
        operation_id="updateLead",
        responses=error_responses(ValidationFailed, LeadNotFound, DuplicateLead, body=True),
    )
    async def update_lead(
        self,
        request: AuthedRequest,
        lead_id: FromPath[str],
        data: JSONBody[LeadPatchIn],
    ) -> LeadEnvelope:
        changes = LeadChanges.parse(**given_fields(data))
        lead = await self.leads.update(request.user.account_id, lead_id, changes)
        return LeadEnvelope.of("Lead updated", LeadOut.of(lead))

    @delete(
        "/{lead_id:str}",
        status_code=200,
        summary="Delete a lead",
        operation_id="deleteLead",
        responses=error_responses(LeadNotFound),
    )
    async def delete_lead(
        self, request: AuthedRequest, lead_id: FromPath[str]
    ) -> DeletedLeadEnvelope:
        await self.leads.delete(request.user.account_id, lead_id)
        return DeletedLeadEnvelope.of("Lead deleted", DeletedOut(lead_id=lead_id))
