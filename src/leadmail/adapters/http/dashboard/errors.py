"""The dashboard's failures as pages, not envelopes: the status the API's error table gives
the same failure, and its words; a failed CSRF check is a 403 page."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, PermissionDeniedException
from litestar.response import Template
from litestar.types import ExceptionHandlersMap

from leadmail.adapters.http.dashboard.pages import SECTIONS
from leadmail.adapters.http.dashboard.security import (
    PAGE_HEADERS,
    SignInNeeded,
    sign_in_redirect,
)
from leadmail.adapters.http.error_table import kind_of
from leadmail.adapters.http.tracing import request_id_of
from leadmail.domain.errors import LeadmailError

log = structlog.get_logger("leadmail.http")
AnyRequest = Request[Any, Any, Any]


def _page(request: AnyRequest, status: int, heading: str, error: str) -> Template:
    user = request.scope.get("user")
    return Template(
        template_name="error.html",
        status_code=status,
        headers=PAGE_HEADERS,
        context={
            "session": user if hasattr(user, "user") else None,
            "sections": SECTIONS,
            "section": "",
            "title": heading,
            "heading": heading,
            "error": error,
        },
    )


def _known(request: AnyRequest, exc: LeadmailError) -> Response[Any]:
    kind = kind_of(exc)
    if kind is None:
        return _bug(request, exc)
    return _page(request, kind.status, kind.message, exc.message)


def _sign_in(request: AnyRequest, exc: SignInNeeded) -> Response[Any]:
    redirect = sign_in_redirect(exc)
    redirect.headers.update(PAGE_HEADERS)
    return redirect


def _forbidden(request: AnyRequest, exc: PermissionDeniedException) -> Response[Any]:
    return _page(
        request,
        403,
        "Refused",
        "This form was not sent by the dashboard (its security token is missing or wrong)."
        " Reload the page and try again.",
    )


def _http(request: AnyRequest, exc: HTTPException) -> Response[Any]:
    heading = "Not found" if exc.status_code == 404 else "Not possible"
    return _page(request, exc.status_code, heading, exc.detail)


def _bug(request: AnyRequest, exc: Exception) -> Response[Any]:
    request_id = request_id_of(request.scope)
    log.error("unhandled_error", request_id=request_id, exc_info=exc)
    return _page(
        request,
        500,
        "Something went wrong",
        f"The service failed to answer; it was logged with request id {request_id}.",
    )


DASHBOARD_ERRORS: ExceptionHandlersMap = {
    SignInNeeded: _sign_in,
    LeadmailError: _known,
    PermissionDeniedException: _forbidden,
    HTTPException: _http,
    Exception: _bug,
}
