"""POST /api/v1/webhooks/{provider}: the providers' events about our messages.

One route per provider whose secret is configured (webhook_verifiers): a provider without
one has no route at all (404). No API key: the provider's own proof is the gate, checked
on the raw body before it is decoded (401, nothing stored). A verified body is read as the
provider's events (domain/provider_events) and applied; every verified request is answered
200, events about messages we do not know and duplicates included, so that no provider
retries what will never change. Left out of the OpenAPI document: a provider, not an API
client, calls them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import structlog
from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler

from leadmail.adapters.http.envelopes import Ok
from leadmail.adapters.http.error_table import MALFORMED_JSON
from leadmail.adapters.http.errors import envelope
from leadmail.adapters.http.json_depth import TOO_DEEP, too_deep
from leadmail.adapters.http.webhooks.signatures import (
    MailgunSignature,
    PostmarkCredentials,
    ResendSignature,
    SendGridSignature,
    Verifier,
)
from leadmail.domain.provider_events import PROVIDERS, read_events
from leadmail.services.provider_events import ProviderEventService

WEBHOOKS = "/api/v1/webhooks/"  # no API key, no query check: the provider's proof instead
log = structlog.get_logger("leadmail.webhooks")


class WebhookOut(msgspec.Struct):
    """What became of the request's events: ``applied`` now, ``duplicates`` (stored before),
    ``unknown`` (about no message of ours: dropped), ``ignored`` (of a type not kept, or
    unreadable)."""

    applied: int
    duplicates: int
    unknown: int
    ignored: int


class WebhookEnvelope(Ok):
    data: WebhookOut


def webhook_verifiers(
    *, resend_secret: str, sendgrid_public_key: str, mailgun_signing_key: str, postmark_auth: str
) -> dict[str, Verifier]:
    """A verifier for each provider whose setting is not empty, in PROVIDERS' order."""
    verifiers: dict[str, Verifier] = {}
    if resend_secret:
        verifiers["resend"] = ResendSignature(resend_secret)
    if postmark_auth:
        verifiers["postmark"] = PostmarkCredentials(postmark_auth)
    if sendgrid_public_key:
        verifiers["sendgrid"] = SendGridSignature(sendgrid_public_key)
    if mailgun_signing_key:
        verifiers["mailgun"] = MailgunSignature(mailgun_signing_key)
    assert set(verifiers) <= set(PROVIDERS)
    return verifiers


def webhook_routes(
    service: ProviderEventService, verifiers: Mapping[str, Verifier]
) -> list[HTTPRouteHandler]:
    return [_route(provider, verifier, service) for provider, verifier in verifiers.items()]


def _headers(request: Request[Any, Any, Any]) -> dict[str, str]:
    # Names arrive lower-cased in the ASGI scope; a repeated header keeps its first value.
    found: dict[str, str] = {}
    for name, value in request.scope["headers"]:
        found.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return found


def _route(provider: str, verifier: Verifier, service: ProviderEventService) -> HTTPRouteHandler:
    @post(
        f"{WEBHOOKS}{provider}",
        status_code=200,
        include_in_schema=False,
        name=f"webhook {provider}",
    )
    async def receive(request: Request[Any, Any, Any]) -> Response[Any]:
        body = await request.body()
        headers = _headers(request)
        verifier.verify(headers, body)
        if too_deep(body):
            return envelope(MALFORMED_JSON, TOO_DEEP)
        try:
            payload = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return envelope(MALFORMED_JSON, "The webhook's body is not JSON")
        reading = read_events(provider, payload, headers.get("svix-id", ""))
        received = await service.receive(reading.events)
        ignored = reading.ignored + reading.unreadable
        log.info(
            "webhook_received",
            provider=provider,
            applied=received.applied,
            duplicates=received.duplicates,
            unknown=received.unknown,
            ignored=reading.ignored,
            unreadable=reading.unreadable,
        )
        out = WebhookOut(received.applied, received.duplicates, received.unknown, ignored)
        return Response(WebhookEnvelope.of("Events received", out))

    return receive
