"""The dashboard's router: its pages, its static files, its session guard, CSRF check,
headers and error pages; and the template engine the app renders the pages with."""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.middleware.base import DefineMiddleware
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from leadmail.adapters.http.binding import bound_controller
from leadmail.adapters.http.dashboard.auth import AuthController
from leadmail.adapters.http.dashboard.campaigns import CampaignPages
from leadmail.adapters.http.dashboard.errors import DASHBOARD_ERRORS
from leadmail.adapters.http.dashboard.imports import import_pages
from leadmail.adapters.http.dashboard.keys import KeyPages
from leadmail.adapters.http.dashboard.leads import LeadPages
from leadmail.adapters.http.dashboard.overview import OverviewPage
from leadmail.adapters.http.dashboard.security import (
    DASHBOARD,
    FormProtection,
    SessionCheck,
    SessionGuard,
    csrf_config,
    page_headers,
)
from leadmail.adapters.http.dashboard.suppressions import SuppressionPages
from leadmail.adapters.http.dashboard.templates import TemplatePages
from leadmail.services.registry import Services

HERE = Path(__file__).parent
ONE_HOUR = 60 * 60


def dashboard_templates() -> TemplateConfig[JinjaTemplateEngine]:
    return TemplateConfig(directory=HERE / "templates", engine=JinjaTemplateEngine)


def dashboard_router(services: Services, *, secure_cookies: bool, upload_limit: int) -> Router:
    """``secure_cookies``: the cookies are sent over https only (LEADMAIL_PUBLIC_URL is
    https). ``upload_limit``: the largest CSV file an import takes (bytes)."""
    static = create_static_files_router(
        path="/static",
        directories=[HERE / "static"],
        name="dashboard-static",
        cache_control=CacheControlHeader(max_age=ONE_HOUR, private=True),
        include_in_schema=False,
    )
    guard = SessionGuard(services.sign_in, services.health)
    csrf = DefineMiddleware(
        FormProtection,
        config=csrf_config(secure=secure_cookies),
        key=lambda: services.sign_in.form_key,
    )
    return Router(
        path=DASHBOARD,
        route_handlers=[
            bound_controller(
                AuthController,
                sign_in=services.sign_in,
                users=services.users,
                secure_cookies=secure_cookies,
            ),
            bound_controller(
                OverviewPage, activity=services.activity, campaigns=services.campaigns
            ),
            bound_controller(
                LeadPages,
                leads=services.leads,
                timeline=services.lead_timeline,
                exports=services.export,
            ),
            bound_controller(import_pages(upload_limit), imports=services.imports),
            bound_controller(
                CampaignPages,
                campaigns=services.campaigns,
                templates=services.templates,
                leads=services.leads,
            ),
            bound_controller(
                TemplatePages,
                templates=services.templates,
                authoring=services.template_authoring,
                trials=services.template_trials,
            ),
            bound_controller(SuppressionPages, suppressions=services.suppressions),
            bound_controller(KeyPages, keys=services.keys, sender_domains=services.sender_domains),
            static,
        ],
        # The session first: nobody without one has a body read or a token checked.
        middleware=[DefineMiddleware(SessionCheck, guard=guard), csrf],
        response_headers=page_headers(),
        exception_handlers=DASHBOARD_ERRORS,
        include_in_schema=False,
    )
