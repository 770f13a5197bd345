"""Signing in and out, and setting a password from a one-time link."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.pages import field_errors, public_page, see_other
from leadmail.adapters.http.dashboard.security import (
    DASHBOARD,
    SESSION_COOKIE,
    SIGN_IN,
    session_cookie,
)
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.users import MIN_PASSWORD, SetupLinkInvalid, SignInRefused, SignInThrottled
from leadmail.services.sign_in import SignIn
from leadmail.services.users import Users

AnyRequest = Request[Any, Any, Any]


def _next(raw: object) -> str:
    """Where to go after signing in: a dashboard path only (never another site)."""
    text = str(raw or "")
    if text.startswith(DASHBOARD + "/") and not text.startswith("//") and "\\" not in text:
        return text
    return DASHBOARD + "/"


def _client(request: AnyRequest) -> str:
    client = request.scope.get("client")
    return client[0] if client else "unknown"


class AuthController(Controller):
    path = "/"
    include_in_schema = False
    sign_in: ClassVar[SignIn]
    users: ClassVar[Users]
    secure_cookies: ClassVar[bool]

    @get("/sign-in")
    async def sign_in_page(
        self,
        next: FromQuery[str] = "",
        email: FromQuery[str] = "",
        password_set: FromQuery[str] = "",
        signed_out: FromQuery[str] = "",
    ) -> Template:
        notice = (
            "Your password is set: sign in with it."
            if password_set
            else "You are signed out."
            if signed_out
            else ""
        )
        return public_page(
            "sign_in.html", "Sign in", next=_next(next), email=email[:254], notice=notice
        )

    @post("/sign-in")
    async def sign_in_form(self, request: AnyRequest) -> Template | Redirect:
        form = await request.form()
        email, password = str(form.get("email", "")), str(form.get("password", ""))
        wanted = _next(form.get("next"))
        try:
            secret = await self.sign_in.sign_in(email, password, _client(request))
        except SignInThrottled as e:
            return public_page(
                "sign_in.html",
                "Sign in",
                status_code=429,
                headers={"retry-after": str(e.retry_after)},
                error=e.message,
                next=wanted,
                email=email,
            )
        except SignInRefused as e:
            return public_page(
                "sign_in.html",
                "Sign in",
                status_code=401,
                error=e.message,
                next=wanted,
                email=email,
            )
        redirect = see_other(wanted)
        redirect.set_cookie(session_cookie(secret, secure=self.secure_cookies))
        return redirect

    @post("/sign-out")
    async def sign_out(self, request: AnyRequest) -> Redirect:
        secret = request.cookies.get(SESSION_COOKIE)
        if secret:
            await self.sign_in.sign_out(secret)
        redirect = see_other(SIGN_IN, signed_out="1")
        redirect.delete_cookie(SESSION_COOKIE, path=DASHBOARD)
        return redirect

    @get("/password/{link:str}")
    async def password_page(self, link: FromPath[str]) -> Template:
        return public_page("password.html", "Set your password", link=link, minimum=MIN_PASSWORD)

    @post("/password/{link:str}")
    async def password_form(self, request: AnyRequest, link: FromPath[str]) -> Template | Redirect:
        form = await request.form()
        password, again = str(form.get("password", "")), str(form.get("again", ""))
        errors: dict[str, str] = {}
        if password != again:
            errors["again"] = "`again` is not the same password"
        else:
            try:
                user = await self.users.set_password(link, password)
            except ValidationFailed as e:
                errors = field_errors(e)
            except SetupLinkInvalid as e:
                errors = {"link": e.message}
            else:
                return see_other(SIGN_IN, email=user.email, password_set="1")
        return public_page(
            "password.html",
            "Set your password",
            status_code=422 if "link" not in errors else 410,
            link=link,
            minimum=MIN_PASSWORD,
            errors=errors,
        )
