"""/api/v1/suppressions: the addresses an account must not mail (services/suppressions.py)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, delete, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, Parameter, PathParameter
from litestar.response import Response

from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    SuppressionEnvelope,
    SuppressionPageEnvelope,
    SuppressionRemovedEnvelope,
)
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import Limit
from leadmail.adapters.http.suppression_schemas import (
    RemovedOut,
    SuppressionIn,
    SuppressionOut,
    SuppressionPageOut,
)
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE
from leadmail.domain.suppressions import SuppressionNotFound, SuppressionReason
from leadmail.domain.text import NOT_IN_A_LINE
from leadmail.services.suppressions import SuppressionList

AuthedRequest = Request[Principal, Any, Any]
LIST_TEXT = (
    "Newest first. Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100;"
    " `reason` keeps one reason. Every send checks this list before the provider is called"
    " (see sendEmail, sendTemplateEmail and campaigns)."
)
ADD_TEXT = (
    "Adds an address as `manual` (a display name is dropped, case does not matter): 201"
    " with the new entry, or 200 with the entry already there (kept as it is)."
)
Email = Annotated[
    str,
    PathParameter(
        description="The address, URL-encoded (`ada%40example.com`)",
        min_length=1,
        max_length=MAX_EMAIL_LENGTH,
        # One line, as every address is (a NUL among it is 422 naming it, as in an id).
        pattern=f"^[^{NOT_IN_A_LINE}\\t]+$",
    ),
]
Reason = Annotated[
    SuppressionReason | None, Parameter(description="Only the entries of this reason")
]


class SuppressionController(DiscoverableController):
    path = "/api/v1/suppressions"
    tags = ["suppressions"]
    suppressions: ClassVar[SuppressionList]

    collection_options = options_for("/", "GET", "POST")
    item_options = options_for("/{email:str}", "DELETE")

    @get(
        "/",
        summary="List the suppression list",
        description=LIST_TEXT,
        operation_id="listSuppressions",
        responses=error_responses(ValidationFailed),
    )
    async def list_suppressions(
        self,
        request: AuthedRequest,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(
                description=(
                    "`next_cursor` of the previous page, as it came: a position,"
                    " `<microseconds since 1970>.<40 hex digits>`, after which the page starts"
                )
            ),
        ] = None,
        reason: Reason = None,
    ) -> SuppressionPageEnvelope:
        wanted = _reason_of(request)  # as sent: the parameter above documents it
        page = await self.suppressions.list(request.user.account_id, limit, cursor, wanted)
        return SuppressionPageEnvelope.of("Suppressions retrieved", SuppressionPageOut.of(page))

    @post(
        "/",
        status_code=201,
        summary="Add an address to the suppression list",
        description=ADD_TEXT,
        operation_id="addSuppression",
        responses={
            200: ResponseSpec(
                data_container=SuppressionEnvelope,
                description="The address was on the list already: the entry as it stands",
            ),
            **error_responses(ValidationFailed, body=True),
        },
    )
    async def add_suppression(
        self, request: AuthedRequest, data: JSONBody[SuppressionIn]
    ) -> Response[SuppressionEnvelope]:
        added = await self.suppressions.add(
            request.user.account_id, data.email, SuppressionReason(data.reason)
        )
        message = "Suppression added" if added.written else "Already suppressed"
        return Response(
            SuppressionEnvelope.of(message, SuppressionOut.of(added.entry)),
            status_code=201 if added.written else 200,
        )

    @delete(
        "/{email:str}",
        status_code=200,
        summary="Take an address off the suppression list",
        description=(
            "The address may be mailed again from now on. An address not on the list, or"
            " no address at all: 404 `SUPPRESSION_NOT_FOUND`."
        ),
        operation_id="removeSuppression",
        responses=error_responses(SuppressionNotFound, ValidationFailed),
    )
    async def remove_suppression(
        self, request: AuthedRequest, email: Email
    ) -> SuppressionRemovedEnvelope:
        await self.suppressions.remove(request.user.account_id, email)
        return SuppressionRemovedEnvelope.of("Suppression removed", RemovedOut(email=email))


def _reason_of(request: AuthedRequest) -> SuppressionReason | None:
    given = request.query_params.getall("reason", [])
    if not given:
        return None
    if len(given) > 1:
        raise ValidationFailed.one("reason", "may be given only once")
    if given[0] not in set(SuppressionReason):
        known = ", ".join(sorted(SuppressionReason))
        raise ValidationFailed.one("reason", f"must be one of {known}")
    return SuppressionReason(given[0])
