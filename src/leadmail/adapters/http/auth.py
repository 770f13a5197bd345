"""Bearer-key authentication for every API route."""

from __future__ import annotations

from collections.abc import Iterable

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from leadmail.domain.errors import Unauthorized
from leadmail.domain.keys import Principal
from leadmail.services.keys import ApiKeyService


def _authorization(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    # The raw ASGI headers (names arrive lower-cased), not connection.headers: that parses
    # every header into a multi-dict.
    for name, value in headers:
        if name == b"authorization":
            return value.decode("latin-1")
    return None


class BearerKeyMiddleware:
    """Puts the caller's Principal in ``scope["user"]``, or raises Unauthorized (which the
    app's exception handlers turn into a 401 envelope).

    What Litestar's AbstractAuthenticationMiddleware does, with the exclusions this app uses
    (OPTIONS requests, excluded path prefixes), in a plain ASGI middleware: its generic
    version (a connection object, a result object, a regular expression per request) cost
    as much as the key check itself.
    """

    def __init__(
        self, app: ASGIApp, keys: ApiKeyService, exclude_prefixes: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self._keys = keys
        self._exclude_prefixes = exclude_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and not self._excluded(scope):
            principal = await self.authenticate(_authorization(scope["headers"]))
            scope["user"] = principal
            scope["auth"] = principal.key_id
        await self.app(scope, receive, send)

    def _excluded(self, scope: Scope) -> bool:
        return scope.get("method") == "OPTIONS" or scope["path"].startswith(self._exclude_prefixes)

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
