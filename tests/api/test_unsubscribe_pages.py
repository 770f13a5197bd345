"""GET and POST /u/{token}: the one-click unsubscribe pages, with no API key, through the
app in process."""

from __future__ import annotations

from typing import Any

import httpx

from leadmail.domain.unsubscribe import make_token
from tests.api.support import Api, account_auth, plain_email, recorder
from tests.support.envelope import SEND, SUPPRESSIONS, assert_error, assert_ok

ONE_CLICK = {"List-Unsubscribe": "One-Click"}  # as a mail client POSTs it (RFC 8058)


async def link_path(api: Api, address: str, account_id: str | None = None) -> str:
    links = api.services.unsubscribes
    await links.ready()
    url = links.url(account_id or api.account_id, address)
    return url.removeprefix(links.public_url)


async def listed(api: Api, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    page = assert_ok(await api.client.get(SUPPRESSIONS, headers=headers or api.auth))
    items: list[dict[str, Any]] = page["data"]["items"]
    return items


def assert_page(response: httpx.Response, status: int, *texts: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    html = response.text
    assert html.startswith("<!doctype html>")
    for text in texts:
        assert text in html, html
    return html


async def test_get_shows_a_confirm_form_and_unsubscribes_no_one(api: Api) -> None:
    path = await link_path(api, "Ada <Ada@Example.com>")
    assert path.startswith("/u/")

    for _ in range(3):  # a mail scanner following the link, again and again
        response = await api.client.get(path)
        html = assert_page(response, 200, "Unsubscribe", "ada@example.com")

    assert '<form method="post">' in html
    assert '<input type="hidden" name="List-Unsubscribe" value="One-Click">' in html
    assert await listed(api) == []


async def test_post_unsubscribes_that_address_from_that_account_once(api: Api) -> None:
    path = await link_path(api, "ada@example.com")
    other = await account_auth(api, "acc_other")
    assert_ok(await api.client.post(SEND, json=plain_email(), headers=other))  # mailable

    first = await api.client.post(path, data=ONE_CLICK)
    again = await api.client.post(path, data=ONE_CLICK)  # a second click: harmless

    assert_page(first, 200, "You are unsubscribed", "ada@example.com")
    assert_page(again, 200, "You are unsubscribed")
    [entry] = await listed(api)
    assert (entry["email"], entry["reason"]) == ("ada@example.com", "unsubscribed")
    assert (entry["message_id"], entry["campaign_id"]) == (None, None)
    # The same address in another account stays mailable.
    assert await listed(api, other) == []
    assert_ok(await api.client.post(SEND, json=plain_email(), headers=other))
    # This account's next send to it is suppressed.
    response = await api.client.post(SEND, json=plain_email(), headers=api.auth)
    assert_error(response, 422, "RECIPIENT_SUPPRESSED")
    assert len(recorder(api).delivered) == 2  # the other account's two only


async def test_post_takes_the_forms_body_a_multipart_one_or_none(api: Api) -> None:
    paths = [await link_path(api, f"l{n}@example.com") for n in range(3)]

    posted = [
        await api.client.post(paths[0], data=ONE_CLICK),
        await api.client.post(paths[1], files={"List-Unsubscribe": (None, "One-Click")}),
        await api.client.post(paths[2]),
    ]

    for response in posted:
        assert_page(response, 200, "You are unsubscribed")
    assert sorted(e["email"] for e in await listed(api)) == [
        "l0@example.com",
        "l1@example.com",
        "l2@example.com",
    ]


async def test_a_bad_token_is_a_400_page_and_changes_nothing(api: Api) -> None:
    good = (await link_path(api, "ada@example.com")).removeprefix("/u/")
    foreign = make_token(b"another-installation-key-0123456789", api.account_id, "ada@example.com")
    payload, _, mac = good.partition(".")
    tampered = f"{payload}.{'A' if mac[0] != 'A' else 'B'}{mac[1:]}"

    # A NUL or broken UTF-8 in the path is a bad token too (a page, never a 500).
    for token in (foreign, tampered, "not-a-token", good[:-1], "%00", good + "%00", "%ff"):
        for method in ("GET", "POST"):
            response = await api.client.request(method, f"/u/{token}", data=ONE_CLICK)
            assert_page(response, 400, "This link is not valid")
    assert await listed(api) == []


async def test_no_key_is_asked_and_no_query_is_checked(api: Api) -> None:
    path = await link_path(api, "ada@example.com")

    shown = await api.client.get(path, params={"utm_source": "mail"})
    done = await api.client.post(path, params={"x": "1"}, data=ONE_CLICK)

    assert_page(shown, 200)
    assert_page(done, 200)
    # With an API key (of any account) it is the same: the token alone says who.
    assert len(await listed(api)) == 1


async def test_the_pages_are_not_in_the_document(spec: dict[str, Any]) -> None:
    assert not [path for path in spec["paths"] if path.startswith("/u/")]
