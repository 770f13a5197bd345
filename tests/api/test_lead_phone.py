"""A lead's phone: optional, kept as typed, checked, returned, updatable and a filter."""

from __future__ import annotations

import pytest

from tests.api.support import Api
from tests.support.envelope import LEADS, assert_invalid, assert_ok

TYPED = "+44 20 7946 0958"


async def test_a_phone_is_kept_as_typed_and_returned(api: Api) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com", phone=TYPED)

    assert lead["phone"] == TYPED
    got = await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=api.auth)
    assert assert_ok(got)["data"]["phone"] == TYPED


async def test_no_phone_is_an_empty_phone(api: Api) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com")

    assert lead["phone"] == ""


@pytest.mark.parametrize(
    "phone",
    ["(020) 7946-0958", "+1.555.0100", "0", "1" * 32, "  +44 20 7946 0958  "],
)
async def test_digits_spaces_and_the_usual_signs_are_accepted(api: Api, phone: str) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com", phone=phone)

    assert lead["phone"] == phone.strip()


@pytest.mark.parametrize(
    "phone",  # letters, fullwidth digits, a line break, too long, no digit, another sign
    [
        "ext. 12",
        "+44 20 7946 0958 x3",
        "\uff11\uff12\uff13",
        "12\n34",
        "1" * 33,
        "+-()",
        "555/0100",
    ],
)
async def test_anything_else_is_422_naming_phone_and_nothing_is_stored(
    api: Api, phone: str
) -> None:
    body = {"name": "Ada", "email": "ada@example.com", "phone": phone}

    response = await api.client.post(LEADS, json=body, headers=api.auth)

    assert_invalid(response, "phone")
    listed = await api.client.get(LEADS, headers=api.auth)
    assert assert_ok(listed)["data"]["items"] == []


async def test_a_phone_can_be_changed_and_cleared_alone(api: Api) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com", phone=TYPED)
    item = f"{LEADS}/{lead['lead_id']}"

    changed = assert_ok(await api.client.put(item, json={"phone": "555 0100"}, headers=api.auth))
    assert changed["data"]["phone"] == "555 0100"
    assert changed["data"]["name"] == "Ada"
    cleared = assert_ok(await api.client.put(item, json={"phone": ""}, headers=api.auth))
    assert cleared["data"]["phone"] == ""


async def test_an_invalid_phone_in_an_update_is_422_and_changes_nothing(api: Api) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com", phone=TYPED)
    item = f"{LEADS}/{lead['lead_id']}"

    response = await api.client.put(item, json={"phone": "call me"}, headers=api.auth)

    assert_invalid(response, "phone")
    assert assert_ok(await api.client.get(item, headers=api.auth))["data"]["phone"] == TYPED


async def test_the_phone_filter_matches_exactly_as_typed(api: Api) -> None:
    ada = await api.add_lead(name="Ada", email="ada@example.com", phone=TYPED)
    await api.add_lead(name="Bob", email="bob@example.com", phone="+442079460958")
    await api.add_lead(name="Cy", email="cy@example.com")

    async def listed(phone: str) -> list[str]:
        response = await api.client.get(LEADS, params={"phone": phone}, headers=api.auth)
        return [lead["email"] for lead in assert_ok(response)["data"]["items"]]

    assert await listed(TYPED) == ["ada@example.com"]
    assert await listed(f" {TYPED} ") == ["ada@example.com"]
    assert await listed("7946") == []
    assert await listed("+442079460958") == ["bob@example.com"]
    assert ada["phone"] == TYPED
