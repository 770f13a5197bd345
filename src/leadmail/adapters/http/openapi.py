"""OpenAPI: the Bearer scheme, and the error responses each route can return."""

from __future__ import annotations

from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from leadmail.adapters.http.schemas import ErrorEnvelope

_DESCRIPTIONS = {
    400: "Malformed JSON or request (`MALFORMED_JSON`)",
    401: "Missing, malformed, unknown or revoked API key (`UNAUTHORIZED`)",
    403: "The `from` domain is not allowed on this service (`SENDER_NOT_ALLOWED`)",
    404: "No such resource in your account (`LEAD_NOT_FOUND`, `TEMPLATE_NOT_FOUND`,"
    " `MESSAGE_NOT_FOUND`)",
    409: "A lead with this email already exists (`LEAD_EXISTS`; `data.lead_id` is its id), or"
    " an Idempotency-Key is reused with another body or still running"
    " (`IDEMPOTENCY_KEY_REUSED`, `IDEMPOTENCY_IN_PROGRESS`)",
    413: "Request body too large (`PAYLOAD_TOO_LARGE`)",
    422: "A field is missing, unknown, read-only or invalid (`VALIDATION_FAILED`)",
    502: "The email provider refused the message (`PROVIDER_REJECTED`); `data` has every"
    " message's outcome",
    500: "Unexpected error (`INTERNAL_ERROR`; `data.request_id` identifies it)",
    503: "The database or the email provider is unavailable; retry"
    " (`STORAGE_UNAVAILABLE`, `PROVIDER_UNAVAILABLE`, with every message's outcome in `data`)",
}


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    return {
        status: ResponseSpec(
            data_container=ErrorEnvelope, description=_DESCRIPTIONS[status], generate_examples=False
        )
        for status in sorted({400, 401, 500, 503, *statuses})
    }


def openapi_config(version: str) -> OpenAPIConfig:
    return OpenAPIConfig(
        title="leadmail",
        version=version,
        description=(
            "Email and leads for course businesses. Every call needs "
            "`Authorization: Bearer <API_KEY>`; every response is the envelope "
            "`{success, message, error, data, code}`."
        ),
        path="/schema",
        render_plugins=[ScalarRenderPlugin()],
        components=Components(
            security_schemes={
                "BearerAuth": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="An API key from `leadmail keys create`",
                )
            }
        ),
        security=[{"BearerAuth": []}],
    )
