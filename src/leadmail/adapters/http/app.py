"""The Litestar application factory."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from litestar import Litestar, Request
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.openapi.spec import OpenAPI

from leadmail.adapters.http.answers import JsonAnswer
from leadmail.adapters.http.auth import BearerKeyAuth
from leadmail.adapters.http.binding import bound_controller
from leadmail.adapters.http.budgets import RequestBudgets
from leadmail.adapters.http.campaigns import CampaignController
from leadmail.adapters.http.dashboard.routes import dashboard_router, dashboard_templates
from leadmail.adapters.http.dashboard.security import DASHBOARD
from leadmail.adapters.http.email import REPLAYABLE, EmailController
from leadmail.adapters.http.errors import EXCEPTION_HANDLERS
from leadmail.adapters.http.health import HEALTH, READY, health_routes
from leadmail.adapters.http.json_depth import DepthCheckedRequest
from leadmail.adapters.http.lead_actions import LeadActionController
from leadmail.adapters.http.lead_files import LeadFileController
from leadmail.adapters.http.leads import LeadController
from leadmail.adapters.http.messages import MessageController
from leadmail.adapters.http.metrics import METRICS, metrics_routes
from leadmail.adapters.http.openapi import DOCUMENT, finish, openapi_config
from leadmail.adapters.http.privacy import PrivacyController
from leadmail.adapters.http.query_names import QueryNames
from leadmail.adapters.http.suppressions import SuppressionController
from leadmail.adapters.http.templates import TemplateController
from leadmail.adapters.http.tracing import TracedLitestar
from leadmail.adapters.http.unsubscribe_pages import UNSUBSCRIBE, unsubscribe_routes
from leadmail.adapters.http.webhooks.routes import WEBHOOKS, webhook_routes
from leadmail.adapters.http.webhooks.signatures import Verifier
from leadmail.ports.request_limits import RequestLimiter
from leadmail.services.registry import Services


def build_app(
    services: Services,
    *,
    version: str,
    max_body_bytes: int,
    import_max_bytes: int = 52_428_800,
    sender_required: bool = True,
    providers: Sequence[str] = (),
    lifespan: Sequence[Callable[[Litestar], AbstractAsyncContextManager[None]]] = (),
    debug: bool = False,
    webhooks: Mapping[str, Verifier] | None = None,
    key_budget: RequestLimiter | None = None,
    client_budget: RequestLimiter | None = None,
    metrics_token: str = "",
    secure_cookies: bool = False,
) -> Litestar:
    """``sender_required``: no default sender is configured (the document then says a
    send must name its ``from``). ``providers``: every name a message's ``provider`` can
    hold (the document lists them; none: any text). ``webhooks``: the providers whose
    webhooks are taken, with the check of each one's proof (webhook_verifiers).
    ``key_budget``, ``client_budget``: requests a minute per API key, and per client
    address on the unsubscribe pages (None: no limit; budgets.py). ``metrics_token``: what
    GET /metrics asks for (empty: nothing). ``secure_cookies``: the dashboard's cookies go
    over https only (LEADMAIL_PUBLIC_URL is https)."""
    # The providers' webhooks carry their own proof instead of a key, and unsubscribe
    # links their signed token (people and mail clients follow them, with no key).
    # /health and /ready are asked by load balancers and orchestrators, /metrics by a
    # scraper (its own token, when set), with no key.
    # The dashboard's pages have a session of their own (a signed-in user), not a key.
    unkeyed = (DOCUMENT, WEBHOOKS, UNSUBSCRIBE, HEALTH, READY, METRICS, DASHBOARD)
    authenticate = BearerKeyAuth(services.keys, exclude_prefixes=unkeyed)
    query_names = QueryNames()
    health = services.health
    ungated = (HEALTH, READY, DOCUMENT)  # none of them reads a table
    budgets = RequestBudgets(key_budget, client_budget, public_prefixes=(UNSUBSCRIBE,))
    charging = key_budget is not None or client_budget is not None

    async def before_request(request: Request[Any, Any, Any]) -> None:
        if not health.started and not request.scope["path"].startswith(ungated):
            health.check_started()  # a 503 until the migrations are applied
        # Who asks first (401), then how often (429), then what they ask (422); the body
        # is not read yet.
        await authenticate(request)
        if charging:
            await budgets.charge(request)
        query_names.check(request)

    app = TracedLitestar(
        route_handlers=[
            bound_controller(LeadController, leads=services.leads, timeline=services.lead_timeline),
            bound_controller(
                LeadFileController,
                imports=services.imports,
                export=services.export,
                upload_limit=import_max_bytes,
            ),
            bound_controller(LeadActionController, actions=services.lead_actions),
            bound_controller(
                EmailController,
                templates=services.templates,
                send_email=services.send_email,
                send_template_email=services.send_template_email,
            ),
            bound_controller(MessageController, messages=services.messages),
            bound_controller(CampaignController, campaigns=services.campaigns),
            bound_controller(SuppressionController, suppressions=services.suppressions),
            bound_controller(PrivacyController, privacy=services.privacy),
            bound_controller(
                TemplateController,
                templates=services.templates,
                authoring=services.template_authoring,
                trials=services.template_trials,
            ),
            *webhook_routes(services.provider_events, webhooks or {}),
            *unsubscribe_routes(services.unsubscribes),
            *health_routes(services.health),
            *metrics_routes(services.operations, metrics_token),
            dashboard_router(
                services, secure_cookies=secure_cookies, upload_limit=import_max_bytes
            ),
        ],
        template_config=dashboard_templates(),
        before_request=before_request,
        exception_handlers=EXCEPTION_HANDLERS,
        response_class=JsonAnswer,
        request_class=DepthCheckedRequest,
        openapi_config=openapi_config(version),
        request_max_body_size=max_body_bytes,
        lifespan=list(lifespan),
        debug=debug,
        logging_config=None,
    )
    query_names.learn(app, skip_prefixes=unkeyed)
    # Built here (the plugin keeps it), and finished before it is first served. An app
    # made with the same inputs has the same routes and so the same document: built once
    # per process (a server makes one app; the test suite a thousand, and this was half
    # of each one's making).
    plugin = app.plugins.get(OpenAPIPlugin)
    inputs = (version, max_body_bytes, import_max_bytes, sender_required, tuple(providers),
              tuple(sorted(webhooks or {})))  # fmt: skip
    document = _DOCUMENTS.get(inputs)
    if document is None:
        document = plugin.provide_openapi()
        finish(document, REPLAYABLE, sender_required=sender_required, providers=providers)
        _DOCUMENTS[inputs] = document
    else:
        plugin._openapi = document  # what provide_openapi would have built and kept
    return app


_DOCUMENTS: dict[tuple[object, ...], OpenAPI] = {}
