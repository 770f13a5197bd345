"""OPTIONS for every API path, in the envelope.

Litestar's automatic OPTIONS handler answers 204 with no body, and when a path's handlers
are registered one by one its Allow header lists only the first one's methods. These
handlers replace it: declare them first in a controller's body (Litestar registers a
controller's handlers in declaration order). Discovery needs no key: it reveals nothing but
the methods.
"""

from __future__ import annotations

from litestar import Response, route
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler

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
