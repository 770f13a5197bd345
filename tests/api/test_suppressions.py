"""/api/v1/suppressions, and the list on the send endpoints, through the app in process."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from leadmail.domain.suppressions import SuppressionReason
from tests.api.support import Api, account_auth, plain_email, recorder, welcome_email
from tests.support.envelope import (
    SEND,
    SUPPRESSIONS,
    TEMPLATE,
    assert_error,
    assert_invalid,
    assert_ok,
)


async def add(api: Api, email: str, headers: dict[str, str] | None = None) -> Any:
    response = await api.client.post(
        SUPPRESSIONS, json={"email": email}, headers=headers or api.auth
    )
    assert response.status_code in (200, 201), response.text
    return response


async def test_an_address_is_added_once_normalised_and_listed(api: Api) -> None:
    first = await add(api, "Ada Lovelace <Ada@Example.COM>")
    again = await add(api, "ada@example.com")

    assert first.status_code == 201
    created = first.json()
    assert (created["success"], created["message"]) == (True, "Suppression added")
    entry = created["data"]
    assert (entry["email"], entry["reason"]) == ("ada@example.com", "manual")
    assert (entry["message_id"], entry["campaign_id"]) == (None, None)
    assert again.status_code == 200
    assert again.json()["message"] == "Already suppressed"
    assert again.json()["data"] == entry
    listed = assert_ok(await api.client.get(SUPPRESSIONS, headers=api.auth))["data"]
    assert listed == {"items": [entry], "next_cursor": None}


async def test_the_list_is_newest_first_a_page_at_a_time(api: Api) -> None:
    for n in range(5):
        await add(api, f"l{n}@example.com")

    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = assert_ok(await api.client.get(SUPPRESSIONS, params=params, headers=api.auth))
        seen += [e["email"] for e in page["data"]["items"]]
        cursor = page["data"]["next_cursor"]
        if cursor is None:
            break
    whole = assert_ok(await api.client.get(SUPPRESSIONS, params={"limit": 100}, headers=api.auth))
    assert seen == [e["email"] for e in whole["data"]["items"]]  # (created_at, digest) desc
    assert sorted(seen) == [f"l{n}@example.com" for n in range(5)]


async def test_the_list_filters_by_reason(api: Api) -> None:
    await add(api, "manual@example.com")
    await api.services.suppressions.record(
        api.account_id, "b@example.com", SuppressionReason.BOUNCED
    )

    page = await api.client.get(SUPPRESSIONS, params={"reason": "bounced"}, headers=api.auth)

    assert [e["email"] for e in assert_ok(page)["data"]["items"]] == ["b@example.com"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"cursor": "not a cursor"}, "cursor"),
        ({"cursor": "1.zz"}, "cursor"),  # a cursor's shape, not its digits
        ({"cursor": "1784000000000000.ld_0123456789"}, "cursor"),  # a lead listing's
        ({"reason": "spam"}, "reason"),
        ({"reason": ["bounced", "manual"]}, "reason"),
    ],
)
async def test_bad_listing_parameters_are_named(
    api: Api, params: dict[str, Any], field: str
) -> None:
    assert_invalid(await api.client.get(SUPPRESSIONS, params=params, headers=api.auth), field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not an address"}, "email"),
        ({"email": "ada@example.com", "reason": "bounced"}, "reason"),
        ({"email": "ada@example.com", "reason": "unsubscribed"}, "reason"),
        ({}, "email"),
        ({"email": "ada@example.com", "extra": 1}, "extra"),
    ],
)
async def test_bad_entries_are_refused_with_nothing_stored(
    api: Api, body: dict[str, Any], field: str
) -> None:
    assert_invalid(await api.client.post(SUPPRESSIONS, json=body, headers=api.auth), field)
    listed = assert_ok(await api.client.get(SUPPRESSIONS, headers=api.auth))["data"]
    assert listed["items"] == []


@pytest.mark.parametrize("reason", ["bounced", "complained", "unsubscribed"])
async def test_a_reason_the_service_adds_itself_is_refused_saying_so(api: Api, reason: str) -> None:
    sent = {"email": "ada@example.com", "reason": reason}

    body = assert_invalid(
        await api.client.post(SUPPRESSIONS, json=sent, headers=api.auth), "reason"
    )

    [error] = body["data"]["errors"]
    assert error["message"].startswith("must be `manual`")
    assert "added by the service itself" in error["message"]


async def test_an_address_is_removed_once(api: Api) -> None:
    await add(api, "ada@example.com")

    gone = await api.client.delete(f"{SUPPRESSIONS}/{quote('ADA@example.com')}", headers=api.auth)
    again = await api.client.delete(f"{SUPPRESSIONS}/ada%40example.com", headers=api.auth)

    assert assert_ok(gone)["message"] == "Suppression removed"
    body = assert_error(again, 404, "SUPPRESSION_NOT_FOUND")
    assert "ada@example.com" in body["error"]
    nothing = await api.client.delete(f"{SUPPRESSIONS}/not-an-address", headers=api.auth)
    assert_error(nothing, 404, "SUPPRESSION_NOT_FOUND")


async def test_another_accounts_list_is_invisible_and_untouchable(api: Api) -> None:
    theirs = await account_auth(api, "acc_other_school")
    await add(api, "ada@example.com", theirs)

    assert assert_ok(await api.client.get(SUPPRESSIONS, headers=api.auth))["data"]["items"] == []
    mine = await api.client.delete(f"{SUPPRESSIONS}/ada%40example.com", headers=api.auth)
    assert_error(mine, 404, "SUPPRESSION_NOT_FOUND")
    sent = await api.client.post(SEND, json=plain_email(to="ada@example.com"), headers=api.auth)
    assert assert_ok(sent)["data"]["status"] == "sent"
    still = assert_ok(await api.client.get(SUPPRESSIONS, headers=theirs))["data"]["items"]
    assert [e["email"] for e in still] == ["ada@example.com"]


# --- the send endpoints ---------------------------------------------------------------


async def test_a_plain_send_to_suppressed_addresses_only_is_422_with_nothing_sent(
    api: Api,
) -> None:
    await add(api, "ada@example.com")

    response = await api.client.post(
        SEND, json=plain_email(to=["Ada <ada@example.com>"]), headers=api.auth
    )

    body = assert_error(response, 422, "RECIPIENT_SUPPRESSED")
    assert "ada@example.com" in body["error"]
    assert recorder(api).attempts == 0


async def test_a_plain_send_goes_to_the_others(api: Api) -> None:
    await add(api, "ada@example.com")
    to = ["ada@example.com", "grace@example.com"]

    message = assert_ok(await api.client.post(SEND, json=plain_email(to=to), headers=api.auth))

    assert message["data"]["to"] == ["grace@example.com"]
    [delivered] = recorder(api).delivered
    assert [box.address for box in delivered.email.to] == ["grace@example.com"]


async def test_a_template_send_marks_suppressed_recipients_in_order(api: Api) -> None:
    await add(api, "grace@example.com")
    body = welcome_email(to=["ada@example.com", "grace@example.com"])

    answer = assert_ok(await api.client.post(TEMPLATE, json=body, headers=api.auth))

    assert answer["message"] == "Email sent to 1 of 2 recipients (1 suppressed)"
    messages = answer["data"]["messages"]
    assert [(m["to"], m["status"]) for m in messages] == [
        (["ada@example.com"], "sent"),
        (["grace@example.com"], "suppressed"),
    ]
    held = messages[1]
    assert "suppression list (manual)" in held["last_error"]
    stored = await api.client.get(f"/api/v1/email/messages/{held['id']}", headers=api.auth)
    assert assert_ok(stored)["data"]["status"] == "suppressed"
    assert [d.email.to[0].address for d in recorder(api).delivered] == ["ada@example.com"]


async def test_a_transactional_send_reaches_a_manual_entry(api: Api) -> None:
    await add(api, "ada@example.com")
    body = plain_email(to="ada@example.com", transactional=True)

    assert assert_ok(await api.client.post(SEND, json=body, headers=api.auth))["data"]["status"]
    assert recorder(api).attempts == 1


@pytest.mark.parametrize("value", [0, 1, "true", "false", None, [True]])
@pytest.mark.parametrize("flag", ["transactional", "list_unsubscribe"])
async def test_the_flags_take_json_booleans_only(api: Api, flag: str, value: Any) -> None:
    for path, body in [(SEND, plain_email()), (TEMPLATE, welcome_email())]:
        response = await api.client.post(path, json={**body, flag: value}, headers=api.auth)
        assert_invalid(response, flag)
    assert recorder(api).attempts == 0
