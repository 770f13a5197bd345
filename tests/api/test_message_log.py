"""GET /api/v1/email/messages: the account's message log, newest first, cursor pages, each
filter, the refusals, and one account's messages only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api, account_auth, plain_email, welcome_email
from tests.support.envelope import (
    MESSAGES,
    SEND,
    TEMPLATE,
    assert_invalid,
    assert_message,
    assert_ok,
)


async def sent(api: Api, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    data = assert_ok(await api.client.post(path, json=body, headers=api.auth))["data"]
    return list(data["messages"]) if "messages" in data else [data]


async def log(api: Api, **params: Any) -> dict[str, Any]:
    response = await api.client.get(MESSAGES, params=params, headers=api.auth)
    data = assert_ok(response)["data"]
    assert set(data) == {"items", "next_cursor"}
    for item in data["items"]:
        assert_message(item)
    return dict(data)


async def every_id(api: Api, **params: Any) -> list[str]:
    """The ids of every page, following next_cursor to the end."""
    found: list[str] = []
    cursor = None
    while True:
        page = await log(api, **params, **({"cursor": cursor} if cursor else {}))
        found += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return found


async def test_the_log_is_newest_first_each_message_as_get_gives_it(api: Api) -> None:
    first = await sent(api, SEND, plain_email(subject="First"))
    second = await sent(api, TEMPLATE, welcome_email(to=["ada@example.com", "tom@example.com"]))

    page = await log(api)

    assert {m["id"] for m in page["items"]} == {m["id"] for m in first + second}
    assert page["items"][-1]["id"] == first[0]["id"]  # the oldest last
    assert page["next_cursor"] is None
    one = await api.client.get(f"{MESSAGES}/{first[0]['id']}", headers=api.auth)
    assert page["items"][-1] == assert_ok(one)["data"]


async def test_cursor_pages_hold_every_message_once(api: Api) -> None:
    made = [m["id"] for _ in range(5) for m in await sent(api, SEND, plain_email())]

    pages = await log(api, limit=2)
    everything = await every_id(api, limit=2)

    assert len(pages["items"]) == 2
    assert pages["next_cursor"] is not None
    assert sorted(everything) == sorted(made)
    assert len(set(everything)) == 5


async def test_each_filter_selects_its_messages(api: Api) -> None:
    [plain] = await sent(api, SEND, plain_email(to="Ada Lovelace <Ada@Example.com>"))
    welcome = await sent(api, TEMPLATE, welcome_email(to=["tom@example.com", "ada@example.com"]))

    def ids(page: dict[str, Any]) -> set[str]:
        return {item["id"] for item in page["items"]}

    to_ada = await log(api, to="ADA@example.com")
    assert ids(to_ada) == {plain["id"], welcome[1]["id"]}
    assert ids(await log(api, to="Someone <tom@example.com>")) == {welcome[0]["id"]}
    assert ids(await log(api, template_id="welcome")) == {m["id"] for m in welcome}
    assert ids(await log(api, status="sent")) == {plain["id"], *(m["id"] for m in welcome)}
    assert ids(await log(api, status="failed")) == set()
    assert ids(await log(api, campaign_id="cmp_none")) == set()
    assert ids(await log(api, to="not an address")) == set()  # as the leads' email filter
    assert ids(await log(api, created_before="2000-01-01T00:00:00Z")) == set()
    assert len(ids(await log(api, created_after="2000-01-01T00:00:00Z"))) == 3
    both = await log(api, to="ada@example.com", template_id="welcome")
    assert ids(both) == {welcome[1]["id"]}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"to": "ada\x00@example.com"}, "to"),
        ({"status": "lost"}, "status"),
        ({"template_id": "Not An Id"}, "template_id"),
        ({"campaign_id": "imp_x"}, "campaign_id"),
        ({"created_after": "yesterday"}, "created_after"),
        ({"created_before": "2026-13-01T00:00:00Z"}, "created_before"),
    ],
)
async def test_a_bad_parameter_is_422_naming_it(
    api: Api, params: dict[str, Any], field: str
) -> None:
    response = await api.client.get(MESSAGES, params=params, headers=api.auth)

    assert_invalid(response, field)


async def test_another_accounts_messages_never_show(api: Api) -> None:
    other = await account_auth(api, "globex")
    await sent(api, SEND, plain_email())
    await sent(api, TEMPLATE, welcome_email())

    for params in ({}, {"to": "ada@example.com"}, {"template_id": "welcome"}, {"status": "sent"}):
        response = await api.client.get(MESSAGES, params=params, headers=other)
        assert assert_ok(response)["data"] == {"items": [], "next_cursor": None}
