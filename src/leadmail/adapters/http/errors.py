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
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from litestar.types import ExceptionHandlersMap

from leadmail.adapters.http.schemas import ErrorEnvelope, MessageOut
from leadmail.adapters.http.tracing import request_id_of
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import (
    ApiKeyNotFound,
    LeadmailError,
    LeadNotFound,
    MessageNotFound,
    TemplateNotFound,
    Unauthorized,
    ValidationFailed,
)
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.leads import READ_ONLY_FIELDS
from leadmail.ports.errors import DuplicateLead, StorageUnavailable
from leadmail.services.results import (
    DeliveryFailed,
    DeliveryRejected,
    DeliveryUnavailable,
    SendResult,
)

log = structlog.get_logger("leadmail.http")

# status, short message
ERROR_TABLE: dict[type[LeadmailError], tuple[int, str]] = {
    ValidationFailed: (422, "The request is invalid"),
    Unauthorized: (401, "Authentication failed"),
    LeadNotFound: (404, "Lead not found"),
    ApiKeyNotFound: (404, "API key not found"),
    DuplicateLead: (409, "Lead already exists"),
    StorageUnavailable: (503, "Service temporarily unavailable"),
    TemplateNotFound: (404, "Template not found"),
    MessageNotFound: (404, "Message not found"),
    SenderNotAllowed: (403, "Sender not allowed"),
    IdempotencyKeyReused: (409, "Idempotency key reused"),
    IdempotencyInProgress: (409, "Request in progress"),
    DeliveryRejected: (502, "Email not sent"),
    DeliveryUnavailable: (503, "Email not sent"),
}

BEARER_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="leadmail"'}


def envelope(
    status: int,
    message: str,
    error: str,
    code: str,
    data: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[ErrorEnvelope]:
    return Response(
        ErrorEnvelope(success=False, message=message, error=error, code=code, data=data),
        status_code=status,
        headers=headers,
    )


def handle_leadmail_error(request: Request[Any, Any, Any], exc: LeadmailError) -> Response[Any]:
    for cls in type(exc).__mro__:
        if cls in ERROR_TABLE:
            status, message = ERROR_TABLE[cls]
            break
    else:
        return handle_unexpected(request, exc)
    data: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    if isinstance(exc, ValidationFailed):
        data = {"errors": [{"field": e.field, "message": e.message} for e in exc.errors]}
    elif isinstance(exc, DuplicateLead):
        data = {"lead_id": exc.existing_lead_id}
    elif isinstance(exc, Unauthorized):
        headers = BEARER_CHALLENGE
    elif isinstance(exc, StorageUnavailable):
        headers = {"Retry-After": "1"}
        log.warning("storage_unavailable", cause=type(exc.__cause__).__name__)
    elif isinstance(exc, DeliveryFailed):
        data = _delivery_data(exc.result)
        if isinstance(exc, DeliveryUnavailable):
            headers = {"Retry-After": str(math.ceil(exc.retry_after))}
    return envelope(status, message, exc.message, exc.code, data, headers)


def _delivery_data(result: SendResult) -> dict[str, Any]:
    messages = [msgspec.to_builtins(MessageOut.of(r)) for r in result.messages]
    return {"messages": messages} if result.per_recipient else messages[0]


_FIELD_IN_MESSAGE = re.compile(r"field `([^`]+)`")
_AT_PATH = re.compile(r" - at `\$(?:\.data)?\.?([^`]*)`$")


def _validation_failure(exc: ValidationException) -> Response[Any]:
    cause = exc.__cause__
    extra = exc.extra if isinstance(exc.extra, list) else []
    detail = extra[0] if extra and isinstance(extra[0], dict) else {}
    source = str(detail.get("source", ""))
    text = str(detail.get("message", exc.detail))
    if isinstance(cause, msgspec.ValidationError) and "missing required field `data`" in str(cause):
        return envelope(
            400, "Malformed JSON", "The request body must be a JSON object", "MALFORMED_JSON"
        )
    field = str(detail.get("key", "")) or "body"
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
            text = (
                "is set by the service and cannot be sent"
                if field in READ_ONLY_FIELDS
                else "is not a field of this request"
            )
        elif text.startswith("Object missing required field"):
            text = "is required"
    failure = ValidationFailed.one(field, text)
    return envelope(
        422,
        ERROR_TABLE[ValidationFailed][1],
        failure.message,
        failure.code,
        {"errors": [{"field": field, "message": text}]},
    )


def handle_http_exception(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if isinstance(exc, ValidationException):
        return _validation_failure(exc)
    if isinstance(exc.__cause__, SerializationException) or "JSON is malformed" in exc.detail:
        return envelope(400, "Malformed JSON", exc.detail, "MALFORMED_JSON")
    if isinstance(exc, NotFoundException):
        return envelope(
            404,
            "Not found",
            f"There is no endpoint at {request.method} {request.url.path}",
            "NOT_FOUND",
        )
    if isinstance(exc, MethodNotAllowedException):
        return envelope(
            405,
            "Method not allowed",
            f"{request.method} is not allowed on {request.url.path}",
            "METHOD_NOT_ALLOWED",
            headers=dict(exc.headers or {}),
        )
    if isinstance(exc, NotAuthorizedException):
        return envelope(
            401, "Authentication failed", exc.detail, "UNAUTHORIZED", headers=BEARER_CHALLENGE
        )
    if exc.status_code == 413:
        return envelope(
            413, "Payload too large", "The request body is too large", "PAYLOAD_TOO_LARGE"
        )
    if exc.status_code >= 500:
        return handle_unexpected(request, exc)
    return envelope(
        exc.status_code,
        "Request failed",
        exc.detail,
        f"HTTP_{exc.status_code}",
        headers=exc.headers,
    )


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    request_id = request_id_of(request.scope)
    # Type and message only: a traceback's locals could hold a key or a body.
    log.error(
        "unhandled_error",
        error_type=type(exc).__name__,
        where=_origin(exc),
    )
    return envelope(
        HTTP_500_INTERNAL_SERVER_ERROR,
        "Internal error",
        f"An unexpected error occurred; quote request id {request_id} when reporting it",
        "INTERNAL_ERROR",
        {"request_id": request_id},
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
