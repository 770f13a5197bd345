"""What every dashboard page is sent with, and what every request to it is checked by:
the session (a cookie holding a random secret; the server keeps its digest), the forms'
CSRF tokens (Litestar's CSRF middleware, keyed by the installation's form key), and the
headers that keep the pages to their own origin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Request
from litestar.config.csrf import CSRFConfig
from litestar.datastructures import Cookie, ResponseHeader
from litestar.enums import ScopeType
from litestar.middleware.csrf import CSRFMiddleware
from litestar.response import Redirect
from litestar.types import ASGIApp, Receive, Scope, Send

from leadmail.domain.users import Session
from leadmail.services.health import Health
from leadmail.services.sign_in import SignIn

DASHBOARD = "/app"
SESSION_COOKIE = "leadmail_session"
CSRF_COOKIE = "leadmail_csrf"
SIGN_IN = f"{DASHBOARD}/sign-in"
# Reached without a session: the sign-in and password pages, and the stylesheet and script.
PUBLIC = (SIGN_IN, f"{DASHBOARD}/password/", f"{DASHBOARD}/static/")

# Only this origin's own scripts, styles, images and frames; no inline script or style, no
# framing of the pages, forms posted only here. The template preview (its own page) is
# framed by the dashboard and has a policy of its own.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none';"
    " base-uri 'none'"
)
PAGE_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
}


def page_headers() -> list[ResponseHeader]:
    return [ResponseHeader(name=name, value=value) for name, value in PAGE_HEADERS.items()]


def csrf_config(*, secure: bool) -> CSRFConfig:
    """The secret is filled in from the installation's form key on each request
    (FormProtection); this one is never used."""
    return CSRFConfig(
        secret="unset",
        cookie_name=CSRF_COOKIE,
        cookie_path=DASHBOARD,
        cookie_secure=secure,
        cookie_httponly=True,
        cookie_samesite="lax",
    )


class FormProtection(CSRFMiddleware):
    """Litestar's CSRF middleware (a double-submit token: a cookie and the form's
    ``_csrf_token``, both signed with the key), its key the installation's: every process
    on the database accepts the others' forms. Before the service has started (no key
    yet) it lets the request through to the page, which answers 503."""

    def __init__(self, app: ASGIApp, config: CSRFConfig, key: Callable[[], str | None]) -> None:
        super().__init__(app, config)
        self._key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = self._key()
        if key is None:
            await self.app(scope, receive, send)
            return
        self.config.secret = key
        await super().__call__(scope, receive, send)


class SignInNeeded(Exception):
    """No live session: the page answers with the sign-in page's address (errors.py)."""

    def __init__(self, wanted: str, *, forget: bool) -> None:
        super().__init__(wanted)
        self.wanted = wanted
        self.forget = forget  # an ended or expired session's cookie: drop it


class SessionGuard:
    """Before anything else of a dashboard request (its body unread, its CSRF token not
    checked): a 503 before the service has started, then the session from the cookie in
    ``scope["user"]``, or SignInNeeded. The sign-in and password pages and the static
    files need none. So nobody without a session reaches a page whose body may be large
    (an import's file)."""

    def __init__(self, sign_in: SignIn, health: Health) -> None:
        self._sign_in = sign_in
        self._health = health

    def __deepcopy__(self, memo: dict[int, object]) -> SessionGuard:
        # Litestar deep-copies a router when it is registered: the guard must keep the
        # app's own services (their stores and state), not copies of them.
        return self

    async def check(self, scope: Scope) -> None:
        self._health.check_started()
        path: str = scope["path"]
        if path.startswith(PUBLIC):
            return
        request: Request[Any, Any, Any] = Request(scope)
        secret = request.cookies.get(SESSION_COOKIE)
        session = None if not secret else await self._sign_in.session(secret)
        if session is None:
            query = scope.get("query_string", b"").decode("latin-1")
            raise SignInNeeded(path + (f"?{query}" if query else ""), forget=bool(secret))
        scope["user"] = session


class SessionCheck:
    """SessionGuard as the dashboard's outermost middleware."""

    def __init__(self, app: ASGIApp, guard: SessionGuard) -> None:
        self.app = app
        self._guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            await self._guard.check(scope)
        await self.app(scope, receive, send)


def sign_in_redirect(needed: SignInNeeded) -> Redirect:
    redirect = Redirect(SIGN_IN, query_params={"next": needed.wanted}, status_code=303)
    if needed.forget:
        redirect.delete_cookie(SESSION_COOKIE, path=DASHBOARD)
    return redirect


def session_cookie(secret: str, *, secure: bool) -> Cookie:
    """No expiry in the browser: the server ends the session (12 h idle, sign-out)."""
    return Cookie(
        key=SESSION_COOKIE,
        value=secret,
        path=DASHBOARD,
        httponly=True,
        samesite="lax",
        secure=secure,
    )


def session_of(request: Request[Any, Any, Any]) -> Session:
    session: Session = request.scope["user"]
    return session
