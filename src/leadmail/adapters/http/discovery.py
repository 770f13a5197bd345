"""OPTIONS for every API path, in the envelope.

Litestar's automatic OPTIONS handler answers 204 with no body, and when a path's handlers
are registered one by one its Allow header lists only the first one's methods. These
handlers replace it, in a DiscoverableController: Litestar registers a controller's
handlers in the order of their "<module>.<qualified name>" (Controller.get_route_handlers),
and makes its own OPTIONS handler with the first handler of a path, which then wins over
one registered later; so these must come first, whatever the controller's module is
called. Discovery needs no key: it reveals nothing but the methods.
"""

from __future__ import annotations

from litestar import Controller, Response, route
from litestar.enums import HttpMethod
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler

from leadmail.adapters.http.envelopes import AllowedEnvelope
from leadmail.adapters.http.schemas import AllowedOut


def options_for(path: str, *methods: str) -> HTTPRouteHandler:
    names = sorted({*methods, "OPTIONS"})

    @route(
        path,
        http_method=HttpMethod.OPTIONS,
        include_in_schema=False,
        name=f"options {path}",
    )
    async def options(self: object) -> Response[AllowedEnvelope]:
        return Response(
            AllowedEnvelope.of("Allowed methods", AllowedOut(names)),
            headers={"Allow": ", ".join(names)},
        )

    return options


class DiscoverableController(Controller):
    """A controller whose OPTIONS handlers (options_for) are registered first."""

    def get_route_handlers(self) -> list[BaseRouteHandler]:
        handlers = super().get_route_handlers()
        return sorted(  # stable: the others keep Litestar's order
            handlers,
            key=lambda h: not isinstance(h, HTTPRouteHandler) or "OPTIONS" not in h.http_methods,
        )
