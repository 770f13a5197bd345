"""Two accounts share one store and see nothing of each other: another account's lead
behaves exactly like a missing one."""

from __future__ import annotations

import pytest

from tests.api.support import Api
from tests.support.envelope import LEADS, assert_error, assert_ok, bearer


@pytest.fixture
async def other_account(api: Api) -> dict[str, str]:
    created = await api.services.keys.create("globex")
    assert created.key.account_id != api.account_id
    return bearer(created.secret)


async def test_another_account_cannot_get_update_or_delete_a_lead(
    api: Api, other_account: dict[str, str]
) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com", note="private")
    url = f"{LEADS}/{lead['lead_id']}"

    got = await api.client.get(url, headers=other_account)
    put = await api.client.put(url, json={"note": "hijacked"}, headers=other_account)
    deleted = await api.client.delete(url, headers=other_account)

    for response in (got, put, deleted):
        body = assert_error(response, 404, "LEAD_NOT_FOUND")
        assert "private" not in response.text
        assert "ada@example.com" not in response.text
        assert body.get("data") is None
    still = assert_ok(await api.client.get(url, headers=api.auth))
    assert still["data"] == lead


async def test_another_accounts_404_is_the_same_as_for_a_missing_lead(
    api: Api, other_account: dict[str, str]
) -> None:
    lead = await api.add_lead()

    foreign = await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=other_account)
    missing = await api.client.get(f"{LEADS}/ld_missing", headers=other_account)

    foreign_body = assert_error(foreign, 404, "LEAD_NOT_FOUND")
    missing_body = assert_error(missing, 404, "LEAD_NOT_FOUND")
    assert foreign_body["message"] == missing_body["message"]
    assert foreign_body["error"].replace(lead["lead_id"], "<id>") == missing_body["error"].replace(
        "ld_missing", "<id>"
    )


async def test_lists_hold_only_the_callers_own_leads(
    api: Api, other_account: dict[str, str]
) -> None:
    mine = await api.add_lead(email="ada@example.com")
    theirs = await api.add_lead(headers=other_account, email="grace@example.com")

    assert [lead["lead_id"] for lead in await api.all_leads()] == [mine["lead_id"]]
    assert [lead["lead_id"] for lead in await api.all_leads(other_account)] == [theirs["lead_id"]]
    filtered = await api.client.get(
        LEADS, params={"email": "ada@example.com"}, headers=other_account
    )
    assert assert_ok(filtered)["data"]["items"] == []


async def test_the_same_email_may_be_a_lead_in_two_accounts(
    api: Api, other_account: dict[str, str]
) -> None:
    mine = await api.add_lead(email="ada@example.com")

    theirs = await api.add_lead(headers=other_account, email="ADA@example.com")

    assert theirs["lead_id"] != mine["lead_id"]


async def test_a_cursor_from_one_account_shows_nothing_of_it_to_another(
    api: Api, other_account: dict[str, str]
) -> None:
    for n in range(3):
        await api.add_lead(email=f"a{n}@example.com")
    page = assert_ok(await api.client.get(LEADS, params={"limit": "1"}, headers=api.auth))
    cursor = page["data"]["next_cursor"]
    assert cursor is not None

    response = await api.client.get(LEADS, params={"cursor": cursor}, headers=other_account)

    assert assert_ok(response)["data"]["items"] == []
