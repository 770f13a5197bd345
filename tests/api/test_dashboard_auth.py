"""The dashboard in process, on memory adapters: signing in and out, password links, the
throttle, CSRF, and the headers every page is sent with."""

from __future__ import annotations

import re

from leadmail.adapters.http.dashboard.security import CSRF_COOKIE, SESSION_COOKIE
from leadmail.config import Settings
from leadmail.domain.users import SIGN_IN_FAILURES_PER_MINUTE, secret_digest
from tests.api.dashboard_support import PASSWORD, Staff, csrf_of, invite, post_form, sign_in
from tests.api.support import Api, open_api

# --- signing in and out -----------------------------------------------------------------


async def test_a_page_without_a_session_sends_to_the_sign_in_page(api: Api) -> None:
    response = await api.client.get("/app/leads?tag=vip", follow_redirects=False)

    assert response.status_code == 303
    assert response.headers["location"] == "/app/sign-in?next=%2Fapp%2Fleads%3Ftag%3Dvip"


async def test_signing_in_sets_a_session_cookie_of_which_only_the_digest_is_kept(
    api: Api,
) -> None:
    email = await invite(api, api.key.key.account_name, "ada@school.example")

    response = await sign_in(api.client, email)

    assert response.status_code == 303  # type: ignore[attr-defined]
    assert response.headers["location"] == "/app/"  # type: ignore[attr-defined]
    cookie = response.headers["set-cookie"]  # type: ignore[attr-defined]
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    assert "Path=/app" in cookie
    assert "Secure" not in cookie  # LEADMAIL_PUBLIC_URL is not https here
    secret = api.client.cookies[SESSION_COOKIE]
    stored = api.adapters.users._sessions  # type: ignore[attr-defined]
    assert list(stored) == [secret_digest(secret)]
    overview = await api.client.get("/app/")
    assert overview.status_code == 200
    assert "ada@school.example" in overview.text


async def test_a_wrong_password_and_an_unknown_address_get_the_same_page(api: Api) -> None:
    email = await invite(api, api.key.key.account_name, "ada@school.example")

    wrong = await sign_in(api.client, email, "not the password")
    unknown = await sign_in(api.client, "nobody@school.example", PASSWORD)

    for response in (wrong, unknown):
        assert response.status_code == 401  # type: ignore[attr-defined]
        assert "The email address or the password is not right" in response.text  # type: ignore[attr-defined]
    assert SESSION_COOKIE not in api.client.cookies


async def test_the_sixth_failure_in_a_minute_is_429_with_the_wait(api: Api) -> None:
    email = await invite(api, api.key.key.account_name, "ada@school.example")
    for _ in range(SIGN_IN_FAILURES_PER_MINUTE):
        assert (await sign_in(api.client, email, "wrong")).status_code == 401  # type: ignore[attr-defined]

    throttled = await sign_in(api.client, email, PASSWORD)

    assert throttled.status_code == 429  # type: ignore[attr-defined]
    wait = int(throttled.headers["retry-after"])  # type: ignore[attr-defined]
    assert 1 <= wait <= 60
    assert f"try again in {wait} s" in throttled.text  # type: ignore[attr-defined]


async def test_sign_out_ends_the_session_on_the_server(staff: Staff) -> None:
    secret = staff.client.cookies[SESSION_COOKIE]

    response = await post_form(staff.client, "/app/sign-out", "/app/", {})

    assert response.status_code == 303  # type: ignore[attr-defined]
    assert staff.api.adapters.users._sessions == {}  # type: ignore[attr-defined]
    staff.client.cookies.set(SESSION_COOKIE, secret, path="/app")  # a copy kept elsewhere
    again = await staff.client.get("/app/", follow_redirects=False)
    assert again.status_code == 303
    assert again.headers["location"].startswith("/app/sign-in")


async def test_a_sign_in_goes_back_to_the_page_asked_for_and_never_off_site(api: Api) -> None:
    email = await invite(api, api.key.key.account_name, "ada@school.example")
    for wanted, landing in [
        ("/app/leads?tag=vip", "/app/leads?tag=vip"),
        ("https://evil.example/", "/app/"),
        ("//evil.example/app/", "/app/"),
    ]:
        token = await csrf_of(api.client, "/app/sign-in")
        response = await api.client.post(
            "/app/sign-in",
            data={"email": email, "password": PASSWORD, "next": wanted, "_csrf_token": token},
            follow_redirects=False,
        )
        assert response.headers["location"] == landing


async def test_a_password_link_sets_the_password_once(api: Api) -> None:
    invitation = await api.services.users.create(api.key.key.account_name, "bo@school.example")
    path = "/app/password/" + invitation.link.rsplit("/", 1)[1]

    short = await post_form(api.client, path, path, {"password": "short", "again": "short"})
    differs = await post_form(api.client, path, path, {"password": PASSWORD, "again": "other"})
    done = await post_form(api.client, path, path, {"password": PASSWORD, "again": PASSWORD})
    used = await api.client.get(path)
    again = await api.client.post(path, data={"password": PASSWORD, "again": PASSWORD})

    assert short.status_code == 422  # type: ignore[attr-defined]
    assert "`password` must be at least 12 characters, got 5" in short.text  # type: ignore[attr-defined]
    assert differs.status_code == 422  # type: ignore[attr-defined]
    assert "not the same password" in differs.text  # type: ignore[attr-defined]
    assert done.status_code == 303  # type: ignore[attr-defined]
    assert used.status_code == 200  # the form; sending it again says the link is used up
    assert again.status_code == 403  # no CSRF token: refused before anything
    resent = await post_form(api.client, path, path, {"password": PASSWORD, "again": PASSWORD})
    assert resent.status_code == 410  # type: ignore[attr-defined]
    assert "was used, or is more than 24 h old" in resent.text  # type: ignore[attr-defined]
    assert (await sign_in(api.client, "bo@school.example")).status_code == 303  # type: ignore[attr-defined]


# --- CSRF and headers ---------------------------------------------------------------------


async def test_a_post_without_its_csrf_token_is_403_and_changes_nothing(staff: Staff) -> None:
    response = await staff.client.post(
        "/app/leads", data={"name": "Mallory", "email": "mallory@example.com"}
    )
    forged = await staff.client.post(
        "/app/leads",
        data={"name": "Mallory", "email": "mallory@example.com", "_csrf_token": "forged"},
    )

    for answer in (response, forged):
        assert answer.status_code == 403
        assert "security token" in answer.text
        assert answer.headers["content-type"].startswith("text/html")
    assert await staff.api.all_leads() == []


async def test_every_page_is_sent_with_the_security_headers(staff: Staff) -> None:
    for path in ["/app/", "/app/leads", "/app/leads/new", "/app/sign-in"]:
        response = await staff.client.get(path)
        assert response.status_code == 200, path
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy
        assert "unsafe-inline" not in policy
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["referrer-policy"] == "same-origin"
    missing = await staff.client.get("/app/leads/ld_nope")
    assert missing.status_code == 404
    assert missing.headers["x-frame-options"] == "DENY"


async def test_no_page_has_an_inline_script_or_style(staff: Staff) -> None:
    await staff.api.add_lead()
    [lead] = await staff.api.all_leads()
    for path in ["/app/", "/app/leads", "/app/leads/new", f"/app/leads/{lead['lead_id']}"]:
        text = (await staff.client.get(path)).text
        assert "<script>" not in text
        assert re.search(r"<script(?![^>]*\bsrc=)", text) is None, path
        assert " style=" not in text, path
        assert "<style" not in text, path


async def test_the_csrf_cookie_is_http_only_and_scoped_to_the_dashboard(api: Api) -> None:
    response = await api.client.get("/app/sign-in")

    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{CSRF_COOKIE}=")
    assert "HttpOnly" in cookie
    assert "Path=/app" in cookie


async def test_the_stylesheet_and_script_are_the_apps_own(api: Api) -> None:
    page = (await api.client.get("/app/sign-in")).text
    css = await api.client.get("/app/static/app.css")
    js = await api.client.get("/app/static/app.js")

    assert '<link rel="stylesheet" href="/app/static/app.css">' in page
    assert '<script src="/app/static/app.js" defer></script>' in page
    assert "http" not in re.sub(r"<a [^>]*>", "", page.split("<body>")[0])  # nothing remote
    assert css.status_code == js.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert "javascript" in js.headers["content-type"]
    assert "url(" not in css.text  # no font or image from elsewhere


async def test_the_cookies_are_secure_when_the_public_url_is_https() -> None:
    settings = Settings(migrate_on_start=False, public_url="https://mail.school.example")
    async with open_api(settings=settings) as api:
        email = await invite(api, api.key.key.account_name, "ada@school.example")
        csrf = await api.client.get("/app/sign-in")
        # The test client speaks http, so it keeps a Secure cookie to itself: sent here by
        # hand, as a browser on https would.
        token = re.search(r'name="_csrf_token" value="([^"]+)"', csrf.text)
        cookie = re.match(rf"{CSRF_COOKIE}=([^;]+)", csrf.headers["set-cookie"])
        assert token
        assert cookie
        signed = await api.client.post(
            "/app/sign-in",
            data={"email": email, "password": PASSWORD, "_csrf_token": token.group(1)},
            headers={"cookie": f"{CSRF_COOKIE}={cookie.group(1)}"},
            follow_redirects=False,
        )

    assert "Secure" in csrf.headers["set-cookie"]
    assert signed.status_code == 303
    assert "Secure" in signed.headers["set-cookie"]
