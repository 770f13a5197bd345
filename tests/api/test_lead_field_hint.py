"""An unknown field on a lead is refused with where custom fields go (issue 27); nothing
is stored, and other bodies keep their own words."""

from __future__ import annotations

from tests.api.support import Api, plain_email
from tests.support.envelope import LEADS, SEND, assert_invalid

HINT = "is not a field of a lead; custom fields go under `fields`"


async def test_a_custom_field_beside_the_others_is_422_saying_where_it_goes(api: Api) -> None:
    body = {"name": "Maria", "email": "maria@example.com", "city": "Leeds"}

    response = await api.client.post(LEADS, json=body, headers=api.auth)

    answer = assert_invalid(response, "city")
    assert answer["data"]["errors"] == [{"field": "city", "message": HINT}]
    assert "`city` " + HINT in answer["error"]
    assert await api.all_leads() == []


async def test_a_lead_update_says_the_same(api: Api) -> None:
    lead = await api.add_lead()

    response = await api.client.put(
        f"{LEADS}/{lead['lead_id']}", json={"city": "Leeds"}, headers=api.auth
    )

    answer = assert_invalid(response, "city")
    assert answer["data"]["errors"][0]["message"] == HINT
    [stored] = await api.all_leads()
    assert stored == lead


async def test_another_body_keeps_its_own_words(api: Api) -> None:
    response = await api.client.post(SEND, json=plain_email(city="Leeds"), headers=api.auth)

    answer = assert_invalid(response, "city")
    assert answer["data"]["errors"][0]["message"] == "is not a field of this request"
