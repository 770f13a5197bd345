"""OpenAPI: the Bearer scheme, and the error responses each route can return."""

from __future__ import annotations

from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.spec import Components, SecurityScheme

from leadmail.adapters.http.docs import docs_plugins
from leadmail.adapters.http.error_table import with_status
from leadmail.adapters.http.schemas import ErrorEnvelope


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    return {
        status: ResponseSpec(
            data_container=ErrorEnvelope, description=describe(status), generate_examples=False
        )
        for status in sorted({400, 401, 500, 503, *statuses})
    }


def describe(status: int) -> str:
    """What a status means, code by code, from the error table."""
    return "; ".join(f"`{kind.code}`: {kind.when}" for kind in with_status(status))


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
        render_plugins=docs_plugins("/schema"),
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
