"""The dashboard under /app/ in process, on memory adapters: sign-in, sessions, CSRF, the
pages' headers, and the lead pages' forms and account boundaries. (The browser drives the
real server in tests/browser.)"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from leadmail.adapters.http.dashboard.security import CSRF_COOKIE, SESSION_COOKIE
from leadmail.domain.leads import LeadFields
from leadmail.domain.users import SIGN_IN_FAILURES_PER_MINUTE, secret_digest
from tests.api.support import EPOCH, Api, Client, minutes, open_api

PASSWORD = "a long enough password"
_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


@dataclass
class Staff:
    api: Api
    email: str

    @property
    def client(self) -> Client:
        return self.api.client


async def csrf_of(client: Client, path: str) -> str:
    page = await client.get(path)
    assert page.status_code == 200, page.text
    found = _CSRF.search(page.text)
    assert found, "the page carries no CSRF token"
    return found.group(1)


async def post_form(client: Client, path: str, form_page: str, data: dict[str, str]) -> object:
    token = await csrf_of(client, form_page)
    return await client.post(path, data={**data, "_csrf_token": token}, follow_redirects=False)


async def invite(api: Api, account: str, email: str) -> str:
    """A user of ``account`` with PASSWORD set; its address."""
    invitation = await api.services.users.create(account, email)
    await api.services.users.set_password(invitation.link.rsplit("/", 1)[1], PASSWORD)
    return email


async def sign_in(client: Client, email: str, password: str = PASSWORD) -> object:
    token = await csrf_of(client, "/app/sign-in")
    return await client.post(
        "/app/sign-in",
        data={"email": email, "password": password, "_csrf_token": token},
        follow_redirects=False,
    )


@pytest.fixture
async def staff() -> AsyncIterator[Staff]:
    async with open_api() as api:
        email = await invite(api, api.key.key.account_name, "ada@school.example")
        response = await sign_in(api.client, email)
        assert response.status_code == 303, response.text  # type: ignore[attr-defined]
        yield Staff(api, email)


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


# --- the lead pages ---------------------------------------------------------------------


async def test_a_lead_added_by_the_form_is_the_apis_lead(staff: Staff) -> None:
    response = await post_form(
        staff.client,
        "/app/leads",
        "/app/leads/new",
        {
            "name": "Grace Hopper",
            "email": "grace@example.com",
            "source": "open day",
            "phone": "",
            "note": "",
            "tags": "VIP, autumn",
            "fields": "city: Paris\ncourse: cobol",
        },
    )

    assert response.status_code == 303  # type: ignore[attr-defined]
    [lead] = await staff.api.all_leads()
    assert response.headers["location"] == f"/app/leads/{lead['lead_id']}?added=1"  # type: ignore[attr-defined]
    assert (lead["name"], lead["email"], lead["source"]) == (
        "Grace Hopper",
        "grace@example.com",
        "open day",
    )
    assert lead["tags"] == ["autumn", "vip"]
    assert lead["fields"] == {"city": "Paris", "course": "cobol"}
    shown = await staff.client.get(f"/app/leads/{lead['lead_id']}?added=1")
    assert "Lead added." in shown.text
    assert "grace@example.com" in shown.text


async def test_bad_input_shows_the_apis_message_by_the_field_and_keeps_the_form(
    staff: Staff,
) -> None:
    api_answer = await staff.client.post(
        "/api/v1/leads",
        json={"name": "Grace", "email": "not-an-address"},
        headers=staff.api.auth,
    )
    api_message = api_answer.json()["data"]["errors"][0]["message"]

    response = await post_form(
        staff.client,
        "/app/leads",
        "/app/leads/new",
        {"name": "Grace", "email": "not-an-address", "note": "keep me", "tags": "a, b"},
    )

    assert response.status_code == 422  # type: ignore[attr-defined]
    text = response.text  # type: ignore[attr-defined]
    shown = html.unescape(text)
    assert f'<p class="field-error" id="email-error">`email` {api_message}</p>' in shown
    assert 'aria-invalid="true" aria-describedby="email-error"' in text
    assert 'value="Grace"' in text
    assert ">keep me</textarea>" in text
    assert 'value="a, b"' in text
    assert await staff.api.all_leads() == []  # nothing stored


async def test_a_duplicate_email_is_said_by_the_email_field(staff: Staff) -> None:
    await staff.api.add_lead(email="ada@example.com")

    response = await post_form(
        staff.client, "/app/leads", "/app/leads/new", {"name": "Ada", "email": "ADA@example.com"}
    )

    assert response.status_code == 422  # type: ignore[attr-defined]
    assert "A lead with this email already exists" in response.text  # type: ignore[attr-defined]
    assert len(await staff.api.all_leads()) == 1


async def test_editing_changes_only_what_the_form_changed(staff: Staff) -> None:
    lead = await staff.api.add_lead(fields={"year": 2026, "city": "Paris"}, tags=["a"])
    path = f"/app/leads/{lead['lead_id']}"
    form = (await staff.client.get(path + "/edit")).text
    assert "year: 2026" in form

    response = await post_form(
        staff.client,
        path,
        path + "/edit",
        {
            "name": "Ada King",
            "email": lead["email"],
            "source": "",
            "phone": "",
            "note": "",
            "tags": "a, b",
            "fields": "year: 2026\ncourse: maths",
        },
    )

    assert response.status_code == 303  # type: ignore[attr-defined]
    [stored] = await staff.api.all_leads()
    assert stored["name"] == "Ada King"
    assert stored["tags"] == ["a", "b"]
    # year kept as the number it was; city removed; course added.
    assert stored["fields"] == {"year": 2026, "course": "maths"}


async def test_tags_are_added_and_removed_and_a_lead_deleted(staff: Staff) -> None:
    lead = await staff.api.add_lead(tags=["old"])
    path = f"/app/leads/{lead['lead_id']}"

    tagged = await post_form(staff.client, path + "/tags", path, {"add": "new", "remove": "old"})
    [stored] = await staff.api.all_leads()
    deleted = await post_form(staff.client, path + "/delete", path, {})

    assert tagged.status_code == 303  # type: ignore[attr-defined]
    assert stored["tags"] == ["new"]
    assert deleted.status_code == 303  # type: ignore[attr-defined]
    assert deleted.headers["location"] == "/app/leads?deleted=1"  # type: ignore[attr-defined]
    assert await staff.api.all_leads() == []


async def test_the_table_filters_as_the_api_does_and_counts_what_it_selects(staff: Staff) -> None:
    await staff.api.add_lead(name="Ada", email="ada@example.com", tags=["vip"], source="web")
    await staff.api.add_lead(name="Bob", email="bob@example.com", source="fair")
    await staff.api.add_lead(name="Cy", email="cy@example.com", fields={"city": "Lyon"})

    everyone = await staff.client.get("/app/leads")
    vip = await staff.client.get("/app/leads", params={"tag": "vip"})
    fair = await staff.client.get("/app/leads", params={"source": "fair"})
    search = await staff.client.get("/app/leads", params={"q": "bob"})
    lyon = await staff.client.get("/app/leads", params={"field_key": "city", "field_value": "Lyon"})

    assert "3 leads in all" in everyone.text
    for response, name in [(vip, "Ada"), (fair, "Bob"), (search, "Bob"), (lyon, "Cy")]:
        assert "1 lead match" in response.text
        assert f">{name}</a>" in response.text
    bad = await staff.client.get("/app/leads", params={"tag": "x" * 200})
    assert bad.status_code == 422
    assert "`tag`" in bad.text


async def test_cursor_pages_walk_every_lead_once(staff: Staff) -> None:
    for i in range(55):
        await staff.api.seed(email=f"l{i}@example.com", created_at=EPOCH + minutes(i))
    first = await staff.client.get("/app/leads")
    cursor = re.search(r'rel="next" href="/app/leads\?cursor=([^"]+)"', first.text)
    assert cursor
    second = await staff.client.get("/app/leads", params={"cursor": cursor.group(1)})

    seen = re.findall(r"l(\d+)@example.com", first.text + second.text)
    assert sorted(map(int, seen)) == list(range(55))
    assert 'rel="next"' not in second.text


async def test_the_export_is_the_filtered_csv(staff: Staff) -> None:
    await staff.api.add_lead(name="Ada", email="ada@example.com", tags=["vip"])
    await staff.api.add_lead(name="Bob", email="bob@example.com")

    response = await staff.client.get("/app/leads/export", params={"tag": "vip"})

    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="leads.csv"'
    lines = response.text.strip().splitlines()
    assert lines[0].startswith("email,name")
    assert len(lines) == 2
    assert "ada@example.com" in lines[1]


async def test_another_accounts_lead_is_404_on_every_lead_page(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")
    theirs = await staff.api.services.leads.add(
        other.key.account_id, LeadFields.parse(name="Theirs", email="theirs@example.com")
    )
    path = f"/app/leads/{theirs.lead_id}"

    answers = [
        await staff.client.get(path),
        await staff.client.get(path + "/edit"),
        await post_form(staff.client, path, "/app/leads", {"name": "Mine now", "email": "x@y.z"}),
        await post_form(staff.client, path + "/tags", "/app/leads", {"add": "stolen"}),
        await post_form(staff.client, path + "/delete", "/app/leads", {}),
    ]

    assert [a.status_code for a in answers] == [404] * 5  # type: ignore[attr-defined]
    kept = await staff.api.services.leads.get(other.key.account_id, theirs.lead_id)
    assert (kept.name, kept.tags) == ("Theirs", ())
    listing = await staff.client.get("/app/leads")
    assert "theirs@example.com" not in listing.text
