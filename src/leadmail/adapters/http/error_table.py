"""Every failure the API can answer with, once: its status, code, short message and what it
means. The exception handlers (errors.py) answer from it, and the OpenAPI document
(operation_errors.py) describes each status from it."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from leadmail.adapters.http.json_depth import MAX_JSON_DEPTH
from leadmail.domain.campaigns import AudienceEmpty, CampaignNotFound, CampaignStateConflict
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import (
    LeadmailError,
    LeadNotFound,
    MessageNotFound,
    TemplateNotFound,
    Unauthorized,
    ValidationFailed,
)
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.lead_actions import ActionNotFound
from leadmail.domain.lead_imports import ImportNotFound
from leadmail.domain.quotas import QuotaExceeded
from leadmail.domain.suppressions import RecipientSuppressed, SuppressionNotFound
from leadmail.domain.template_drafts import TemplateExists, TemplateInUse, TemplateReadOnly
from leadmail.ports.errors import DuplicateLead, StorageUnavailable
from leadmail.ports.request_limits import RateLimited
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable


@dataclass(frozen=True, slots=True)
class ErrorKind:
    status: int
    code: str
    message: str  # the envelope's short message
    when: str  # what it means, for the API's documentation


def _of(error: type[LeadmailError], status: int, message: str, when: str) -> ErrorKind:
    return ErrorKind(status, error.code, message, when)


# What the service raises, by exception class (a subclass answers as its nearest listed
# ancestor).
BY_CLASS: dict[type[LeadmailError], ErrorKind] = {
    cls: _of(cls, status, message, when)
    for cls, status, message, when in [
        (ValidationFailed, 422, "The request is invalid",
         "a field is missing, unknown, read-only, of the wrong type or breaks a rule;"
         " `data.errors` lists `{field, message}`"),
        (Unauthorized, 401, "Authentication failed",
         "`Authorization` missing, not `Bearer`, or the key is malformed, unknown or revoked"),
        (SenderNotAllowed, 403, "Sender not allowed",
         "a `from` or `reply_to` domain is not one of the account's sender domains, or,"
         " for an account with none, a `from` domain is not in the service's allowed"
         " domains"),
        (LeadNotFound, 404, "Lead not found", "no such lead in your account"),
        (TemplateNotFound, 404, "Template not found",
         "no template (or version) with that id that your account can use; nothing was sent"),
        (TemplateReadOnly, 403, "Template read-only",
         "the template is predefined (the service's catalog): it cannot be changed or deleted"),
        (TemplateExists, 409, "Template already exists",
         "your account, or the predefined catalog, has a template with that id"),
        (TemplateInUse, 409, "Template in use",
         "campaigns that have not finished, or (a layout) templates, use it; `error` names"
         " them"),
        (MessageNotFound, 404, "Message not found", "no such message in your account"),
        (ImportNotFound, 404, "Import not found", "no such import in your account"),
        (ActionNotFound, 404, "Bulk action not found", "no such bulk action in your account"),
        (CampaignNotFound, 404, "Campaign not found", "no such campaign in your account"),
        (SuppressionNotFound, 404, "Suppression not found",
         "that address is not on your account's suppression list"),
        (DuplicateLead, 409, "Lead already exists",
         "a lead with this email is already in your account; `data.lead_id` is its id"),
        (IdempotencyKeyReused, 409, "Idempotency key reused",
         "this `Idempotency-Key` was used with a different body"),
        (IdempotencyInProgress, 409, "Request in progress",
         "a request with this `Idempotency-Key` is still running"),
        (CampaignStateConflict, 409, "Not possible now",
         "the action does not apply to the campaign's current status, which `error` names"),
        (AudienceEmpty, 422, "Audience empty",
         "the audience matches no lead of your account; nothing was queued"),
        (RecipientSuppressed, 422, "Every recipient suppressed",
         "every address in `to` is on your account's suppression list (`error` names them);"
         " nothing was stored or sent"),
        (RateLimited, 429, "Too many requests",
         "more requests a minute than the API key's budget (`LEADMAIL_RATE_LIMIT`);"
         " nothing was done; retry after `Retry-After` seconds"),
        (QuotaExceeded, 429, "Daily quota reached",
         "the account's daily send quota would be crossed; nothing was sent; `data` has the"
         " quota and `reset_at` (the next 00:00 UTC), `Retry-After` the seconds until then"),
        (DeliveryRejected, 502, "Email not sent",
         "the provider refused the message; `data` has every message's outcome"),
        (StorageUnavailable, 503, "Service temporarily unavailable",
         "the database cannot be reached; retry"),
        (DeliveryUnavailable, 503, "Email not sent",
         "the provider could not be reached in time; `data` has every message's outcome;"
         " retry with the same `Idempotency-Key`"),
    ]
}  # fmt: skip

# What the framework finds wrong with a request before any service sees it.
MALFORMED_JSON = ErrorKind(
    400,
    "MALFORMED_JSON",
    "Malformed JSON",
    "the body is not JSON, is empty, is truncated, or nests arrays and objects more than"
    f" {MAX_JSON_DEPTH} deep",
)
NOT_FOUND = ErrorKind(404, "NOT_FOUND", "Not found", "no such endpoint")
METHOD_NOT_ALLOWED = ErrorKind(
    405, "METHOD_NOT_ALLOWED", "Method not allowed", "the endpoint has no such method (`Allow`)"
)
PAYLOAD_TOO_LARGE = ErrorKind(
    413, "PAYLOAD_TOO_LARGE", "Payload too large", "the body is larger than the service takes"
)
INTERNAL_ERROR = ErrorKind(
    500, "INTERNAL_ERROR", "Internal error", "a bug; `data.request_id` finds the log line"
)
# What a connection is refused with before the app sees a request (connections.py).
MAX_HEAD_BYTES = 16_384
HEADERS_TOO_LARGE = ErrorKind(
    431,
    "HEADERS_TOO_LARGE",
    "Request headers too large",
    f"the request line and headers together are larger than {MAX_HEAD_BYTES} bytes;"
    " the connection is closed",
)


def head_too_large(limit: int = MAX_HEAD_BYTES) -> str:
    """HEADERS_TOO_LARGE's ``error``."""
    return f"The request's headers are larger than {limit} bytes"


REQUEST_TIMEOUT = ErrorKind(
    408,
    "REQUEST_TIMEOUT",
    "Request timeout",
    "the request's headers did not all arrive within `LEADMAIL_HEADER_TIMEOUT_SECONDS`;"
    " the connection is closed",
)
MALFORMED_REQUEST = ErrorKind(
    400,
    "MALFORMED_REQUEST",
    "Malformed request",
    "the request is not valid HTTP/1.1 (a malformed request line, or a header with a"
    " character headers may not hold); the connection is closed",
)
# GET /ready only (not an API operation).
NOT_READY = ErrorKind(
    503,
    "NOT_READY",
    "Not ready",
    "`GET /ready`: the database does not answer, a migration is not applied, or the"
    " process is still starting; `error` says which",
)

ALL: tuple[ErrorKind, ...] = (
    MALFORMED_JSON,
    NOT_FOUND,
    METHOD_NOT_ALLOWED,
    PAYLOAD_TOO_LARGE,
    INTERNAL_ERROR,
    NOT_READY,
    HEADERS_TOO_LARGE,
    REQUEST_TIMEOUT,
    MALFORMED_REQUEST,
    *BY_CLASS.values(),
)


def kind_of(error: LeadmailError) -> ErrorKind | None:
    for cls in type(error).__mro__:
        kind = BY_CLASS.get(cls)
        if kind is not None:
            return kind
    return None


def with_status(status: int) -> list[ErrorKind]:
    return sorted((k for k in ALL if k.status == status), key=operator.attrgetter("code"))
