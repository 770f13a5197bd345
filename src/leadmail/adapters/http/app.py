"""The Litestar application factory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager

from litestar import Litestar
from litestar.di import Provide
from litestar.middleware import DefineMiddleware

from leadmail.adapters.http.auth import BearerKeyMiddleware
from leadmail.adapters.http.email import EmailController
from leadmail.adapters.http.errors import EXCEPTION_HANDLERS
from leadmail.adapters.http.leads import LeadController
from leadmail.adapters.http.openapi import openapi_config
from leadmail.adapters.http.tracing import TracedLitestar
from leadmail.services.registry import Services


def build_app(
    services: Services,
    *,
    version: str,
    max_body_bytes: int,
    lifespan: Sequence[Callable[[Litestar], AbstractAsyncContextManager[None]]] = (),
    debug: bool = False,
) -> Litestar:
    return TracedLitestar(
        route_handlers=[LeadController, EmailController],
        # Dependency names share a namespace with query parameters: "email" is a filter.
        dependencies={
            "leads": Provide(lambda: services.leads, use_cache=True, sync_to_thread=False),
            "mail": Provide(lambda: services.email, use_cache=True, sync_to_thread=False),
        },
        middleware=[
            DefineMiddleware(
                BearerKeyMiddleware, keys=services.keys, exclude_prefixes=("/schema",)
            ),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(version),
        request_max_body_size=max_body_bytes,
        lifespan=list(lifespan),
        debug=debug,
        logging_config=None,
    )
