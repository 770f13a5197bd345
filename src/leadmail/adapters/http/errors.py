"""The one table from error to HTTP status, and the handlers that put every failure, the
framework's own included, into the envelope."""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotAuthorizedException,
    NotFoundException,
    SerializationException,
    ValidationException,
)
from litestar.types import ExceptionHandlersMap

from leadmail.adapters.http.envelopes import (
    ExistingLead,
    Failure,
    FieldErrorOut,
    QuotaOut,
    RequestId,
    ValidationErrors,
)
from leadmail.adapters.http.error_table import (
    BY_CLASS,
    INTERNAL_ERROR,
    MALFORMED_JSON,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    PAYLOAD_TOO_LARGE,
    ErrorKind,
    kind_of,
)
from leadmail.adapters.http.schemas import MessageOut, MessagesOut
from leadmail.adapters.http.timestamps import to_iso
from leadmail.adapters.http.tracing import request_id_of
from leadmail.adapters.http.webhooks.signatures import WebhookNotVerified
from leadmail.domain.errors import LeadmailError, Unauthorized, ValidationFailed
from leadmail.domain.leads import READ_ONLY_FIELDS
from leadmail.domain.quotas import QuotaExceeded
from leadmail.ports.errors import DuplicateLead, StorageUnavailable
from leadmail.ports.request_limits import RateLimited
from leadmail.services.results import DeliveryFailed, DeliveryUnavailable, SendResult
from leadmail.services.suppressions import CLIENT_ONLY_MANUAL

log = structlog.get_logger("leadmail.http")

BEARER_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="leadmail"'}
TOO_LARGE = "The request body is too large"


def envelope(
    kind: ErrorKind,
    error: str,
    data: Any = None,
    headers: dict[str, str] | None = None,
) -> Response[Failure]:
    """The failure envelope of one kind of error; ``error`` says what went wrong."""
    return Response(
        Failure(success=False, message=kind.message, error=error, code=kind.code, data=data),
        status_code=kind.status,
        headers=headers,
    )


def answer_to(exc: LeadmailError) -> Response[Failure] | None:
    """The answer to a failure the error table knows; None for any other (a bug)."""
    kind = kind_of(exc)
    if kind is None:
        return None
    data: Any = None
    headers: dict[str, str] | None = None
    if isinstance(exc, ValidationFailed):
        data = ValidationErrors([FieldErrorOut(e.field, e.message) for e in exc.errors])
    elif isinstance(exc, DuplicateLead):
        data = ExistingLead(exc.existing_lead_id)
    elif isinstance(exc, WebhookNotVerified):
        # The provider's proof, not a key: say which scheme, if there is one to say.
        headers = {"WWW-Authenticate": exc.challenge} if exc.challenge else None
    elif isinstance(exc, Unauthorized):
        headers = BEARER_CHALLENGE
    elif isinstance(exc, StorageUnavailable):
        headers = {"Retry-After": "1"}
    elif isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after)}
    elif isinstance(exc, QuotaExceeded):
        data = QuotaOut(exc.quota, to_iso(exc.reset_at))
        headers = {"Retry-After": str(exc.retry_after)}
    elif isinstance(exc, DeliveryFailed):
        data = _delivery_data(exc.result)
        if isinstance(exc, DeliveryUnavailable):
            headers = {"Retry-After": str(math.ceil(exc.retry_after))}
    return envelope(kind, exc.message, data, headers)


def handle_leadmail_error(request: Request[Any, Any, Any], exc: LeadmailError) -> Response[Any]:
    answer = answer_to(exc)
    if answer is None:
        return handle_unexpected(request, exc)
    if isinstance(exc, StorageUnavailable):
        log.warning("storage_unavailable", cause=type(exc.__cause__).__name__)
    return answer


def _delivery_data(result: SendResult) -> MessageOut | MessagesOut:
    messages = [MessageOut.of(m) for m in result.messages]
    return MessagesOut(messages) if result.per_recipient else messages[0]


_FIELD_IN_MESSAGE = re.compile(r"field `([^`]+)`")
# Why a value the document leaves out is refused, where its type alone cannot say it:
# The operations whose body is a lead: an unknown field there is most likely a custom
# field sent beside the others (`"city": "Leeds"`), and the answer says where it goes.
LEAD_BODIES = frozenset({"addLead", "updateLead"})
# (operation id, body field) -> the text that replaces msgspec's "Invalid enum value".
REFUSED_VALUES = {("addSuppression", "reason"): CLIENT_ONLY_MANUAL}
_AT_PATH = re.compile(r" - at `\$(?:\.data)?\.?([^`]*)`$")
# The framework's words for a required parameter left out (it names no key in ``extra``).
_MISSING_PARAMETER = re.compile(r"^Missing required (?:query|header|cookie) parameter '([^']+)'")


def _validation_failure(exc: ValidationException, operation: object) -> Response[Any]:
    cause = exc.__cause__
    extra = exc.extra if isinstance(exc.extra, list) else []
    detail = extra[0] if extra and isinstance(extra[0], dict) else {}
    source = str(detail.get("source", ""))
    text = str(detail.get("message", exc.detail))
    if isinstance(cause, msgspec.ValidationError) and "missing required field `data`" in str(cause):
        return envelope(MALFORMED_JSON, "The request body must be a JSON object")
    field = str(detail.get("key", "")) or "body"
    missing = _MISSING_PARAMETER.match(text)
    if missing:
        field, text = missing.group(1), "is required"
    if source == "body":
        named = _FIELD_IN_MESSAGE.search(text)
        at = _AT_PATH.search(str(cause)) if cause is not None else None
        if named:
            field = named.group(1)
        elif at and at.group(1):
            field = at.group(1)
        elif field == "data":
            field = "body"
        if text.startswith("Object contains unknown field"):
            if field in READ_ONLY_FIELDS:
                text = "is set by the service and cannot be sent"
            elif str(operation) in LEAD_BODIES and "." not in field:
                text = "is not a field of a lead; custom fields go under `fields`"
            else:
                text = "is not a field of this request"
        elif text.startswith("Object missing required field"):
            text = "is required"
        elif text.startswith("Invalid enum value"):
            text = REFUSED_VALUES.get((str(operation), field), text)
    failure = ValidationFailed.one(field, text)
    return envelope(
        BY_CLASS[ValidationFailed],
        failure.message,
        ValidationErrors([FieldErrorOut(field, text)]),
    )


def handle_http_exception(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if isinstance(exc, ValidationException):
        handler = request.scope.get("route_handler")
        return _validation_failure(exc, getattr(handler, "operation_id", None))
    if isinstance(exc.__cause__, SerializationException) or "JSON is malformed" in exc.detail:
        return envelope(MALFORMED_JSON, exc.detail)
    if isinstance(exc, NotFoundException):
        return envelope(NOT_FOUND, f"There is no endpoint at {request.method} {request.url.path}")
    if isinstance(exc, MethodNotAllowedException):
        return envelope(
            METHOD_NOT_ALLOWED,
            f"{request.method} is not allowed on {request.url.path}",
            headers=dict(exc.headers or {}),
        )
    if isinstance(exc, NotAuthorizedException):
        return envelope(BY_CLASS[Unauthorized], exc.detail, headers=BEARER_CHALLENGE)
    if exc.status_code == 413:
        return envelope(PAYLOAD_TOO_LARGE, TOO_LARGE)
    if exc.status_code >= 500:
        return handle_unexpected(request, exc)
    # Any other status the framework answers with, named by its number.
    other = ErrorKind(exc.status_code, f"HTTP_{exc.status_code}", "Request failed", "")
    return envelope(other, exc.detail, headers=exc.headers)


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    # Type and message only: a traceback's locals could hold a key or a body.
    log.error(
        "unhandled_error",
        error_type=type(exc).__name__,
        where=_origin(exc),
    )
    return internal_error(request_id_of(request.scope))


def internal_error(request_id: str) -> Response[Failure]:
    return envelope(
        INTERNAL_ERROR,
        f"An unexpected error occurred; quote request id {request_id} when reporting it",
        RequestId(request_id),
    )


def _origin(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    LeadmailError: handle_leadmail_error,
    HTTPException: handle_http_exception,
    Exception: handle_unexpected,
}
