"""Bearer-key authentication for every API route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from litestar import Request

from leadmail.domain.errors import Unauthorized
from leadmail.domain.keys import Principal
from leadmail.services.keys import ApiKeyService

BeforeRequest = Callable[[Request[Any, Any, Any]], Awaitable[None]]


def _authorization(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    # The raw ASGI headers (names arrive lower-cased), not connection.headers: that parses
    # every header into a multi-dict.
    for name, value in headers:
        if name == b"authorization":
            return value.decode("latin-1")
    return None


class BearerKeyAuth:
    """Puts the caller's Principal in ``scope["user"]``, or raises Unauthorized (which the
    app's exception handlers turn into a 401 envelope).

    It runs as the app's ``before_request`` hook: once a route has matched (an unknown path
    is a 404, a wrong method a 405, with or without a key), and before the body is read. A
    hook, not a middleware: any middleware makes Litestar wrap every route in a second
    exception-handling layer, and Litestar's authentication middleware adds a connection
    object, a result object and a regular expression per request; together they cost more
    than the key check itself (bench/README.md, "Issue 16").
    """

    def __init__(self, keys: ApiKeyService, exclude_prefixes: tuple[str, ...] = ()) -> None:
        self._keys = keys
        self._exclude_prefixes = exclude_prefixes

    async def __call__(self, request: Request[Any, Any, Any]) -> None:
        scope = request.scope
        if scope["method"] == "OPTIONS" or scope["path"].startswith(self._exclude_prefixes):
            return
        principal = await self.authenticate(_authorization(scope["headers"]))
        scope["user"] = principal
        scope["auth"] = principal.key_id

    async def authenticate(self, header: str | None) -> Principal:
        if header is None:
            raise Unauthorized(
                "Missing Authorization header; send 'Authorization: Bearer <API_KEY>'"
            )
        scheme, _, secret = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise Unauthorized("The Authorization header must use the Bearer scheme")
        if not secret.strip():
            raise Unauthorized("The Authorization header carries no API key")
        return await self._keys.authenticate(secret.strip())
