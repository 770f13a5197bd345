"""/api/v1/leads: the calling account's own lead database."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from litestar import Controller, Request, delete, get, post, put
from litestar.params import FromPath, FromQuery, JSONBody

from leadmail.adapters.http.discovery import options_for
from leadmail.adapters.http.openapi import error_responses
from leadmail.adapters.http.schemas import (
    DeletedOut,
    Envelope,
    LeadIn,
    LeadOut,
    LeadPageOut,
    LeadPatchIn,
    given_fields,
    ok,
)
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE, LeadQuery
from leadmail.domain.leads import LeadChanges, LeadFields
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
        responses=error_responses(400, 409, 413, 422),
    )
    async def add_lead(self, request: AuthedRequest, data: JSONBody[LeadIn]) -> Envelope[LeadOut]:
        fields = LeadFields.parse(**msgspec.structs.asdict(data))
        lead = await self.leads.add(request.user.account_id, fields)
        return ok("Lead added", LeadOut.of(lead))

    @get(
        "/",
        summary="List leads, newest first",
        description="Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100.",
        responses=error_responses(422),
    )
    async def list_leads(
        self,
        request: AuthedRequest,
        limit: FromQuery[int] = DEFAULT_PAGE_SIZE,
        cursor: FromQuery[str | None] = None,
        email: FromQuery[str | None] = None,
        source: FromQuery[str | None] = None,
        phone: FromQuery[str | None] = None,
    ) -> Envelope[LeadPageOut]:
        query = LeadQuery.parse(limit=limit, cursor=cursor, email=email, source=source, phone=phone)
        page = await self.leads.list(request.user.account_id, query)
        return ok("Leads retrieved", LeadPageOut.of(page))

    @get("/{lead_id:str}", summary="Get a lead", responses=error_responses(404))
    async def get_lead(self, request: AuthedRequest, lead_id: FromPath[str]) -> Envelope[LeadOut]:
        lead = await self.leads.get(request.user.account_id, lead_id)
        return ok("Lead retrieved", LeadOut.of(lead))

    @put(
        "/{lead_id:str}",
        summary="Update a lead (partial: omitted fields stay as they are)",
        responses=error_responses(400, 404, 409, 413, 422),
    )
    async def update_lead(
        self,
        request: AuthedRequest,
        lead_id: FromPath[str],
        data: JSONBody[LeadPatchIn],
    ) -> Envelope[LeadOut]:
        changes = LeadChanges.parse(**given_fields(data))
        lead = await self.leads.update(request.user.account_id, lead_id, changes)
        return ok("Lead updated", LeadOut.of(lead))

    @delete(
        "/{lead_id:str}", status_code=200, summary="Delete a lead", responses=error_responses(404)
    )
    async def delete_lead(
        self, request: AuthedRequest, lead_id: FromPath[str]
    ) -> Envelope[DeletedOut]:
        await self.leads.delete(request.user.account_id, lead_id)
        return ok("Lead deleted", DeletedOut(lead_id=lead_id))
