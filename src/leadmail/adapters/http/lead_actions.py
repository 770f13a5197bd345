"""/api/v1/leads/actions: a bulk action on a segment (tags added or removed, or the leads
deleted) started in the background, or counted in a dry run; and its progress."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from litestar import Request, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Response

from leadmail.adapters.http.action_schemas import LeadActionCountOut, LeadActionIn, LeadActionOut
from leadmail.adapters.http.answers import JsonAnswer
from leadmail.adapters.http.campaign_rules import AUDIENCE_TEXT
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import LeadActionCountEnvelope, LeadActionEnvelope
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.path_ids import ActionId
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_actions import ACTION_BATCH, ActionNotFound
from leadmail.services.lead_actions import LeadActions

AuthedRequest = Request[Principal, Any, Any]
START_TEXT = (
    "`action`: `add_tags` or `remove_tags` (with `tags`, 1-50) or `delete` (no `tags`), on"
    " every lead of `filter`. " + AUDIENCE_TEXT + " `filter` is required: `{}` says every"
    " lead. Answers 202 at once with the action `queued`; a background job then freezes the"
    " segment's leads (those in it when the job starts, among the leads created before the"
    f" request) and works through them {ACTION_BATCH} at a time, each batch committed with"
    " its progress: follow it with getLeadAction. A lead already as asked (or deleted"
    " meanwhile) is `skipped`; one that would get more than 50 tags is left as it is and"
    " counted `failed`. A delete removes the leads and their timelines; campaign recipients"
    " keep their address, and messages and suppressions stay. `dry_run: true`: 200 with the"
    " number of leads the action would touch now, and nothing done."
)


class LeadActionController(DiscoverableController):
    path = "/api/v1/leads"
    tags = ["leads"]
    actions: ClassVar[LeadActions]

    actions_options = options_for("/actions", "POST")
    action_options = options_for("/actions/{action_id:str}", "GET")

    @post(
        "/actions",
        status_code=202,
        summary="Tag, untag or delete every lead of a segment",
        description=START_TEXT,
        operation_id="startLeadAction",
        responses={
            **error_responses(ValidationFailed, body=True),
            200: ResponseSpec(
                data_container=LeadActionCountEnvelope,
                description="A dry run: the leads it would touch now (nothing done)",
                generate_examples=False,
            ),
        },
    )
    async def start_action(
        self, request: AuthedRequest, data: JSONBody[LeadActionIn]
    ) -> Response[LeadActionEnvelope]:
        order = data.order()
        account_id = request.user.account_id
        if data.dry_run:
            total = await self.actions.count(account_id, order)
            counted = LeadActionCountEnvelope.of(
                "Dry run: nothing done", LeadActionCountOut.of(order, total)
            )
            # Declared as the 200 answer above (the return type states the 202 one).
            return cast("Response[LeadActionEnvelope]", JsonAnswer(counted, status_code=200))
        started = await self.actions.start(account_id, order)
        envelope = LeadActionEnvelope.of(
            "Bulk action queued", LeadActionOut.of(started, self.actions.now())
        )
        return JsonAnswer(envelope, status_code=202)

    @get(
        "/actions/{action_id:str}",
        summary="Get a bulk action's progress",
        description=(
            "Status, `total` (the leads frozen when it started to run; null before),"
            " `done` and `left`, what it `changed`, `skipped` and `failed`, and"
            " `eta_seconds` while running."
        ),
        operation_id="getLeadAction",
        responses=error_responses(ActionNotFound),
    )
    async def get_action(self, request: AuthedRequest, action_id: ActionId) -> LeadActionEnvelope:
        found = await self.actions.get(request.user.account_id, action_id)
        return LeadActionEnvelope.of(
            "Bulk action retrieved", LeadActionOut.of(found, self.actions.now())
        )
