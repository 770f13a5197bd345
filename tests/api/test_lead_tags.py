"""Tags and custom fields over HTTP: POST and PUT take them, every answer shows them, and
POST /api/v1/leads/{id}/tags changes tags; every broken rule a 422 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api, account_auth
from tests.support.envelope import LEADS, assert_error, assert_invalid, ok_data


async def test_a_lead_is_added_with_tags_and_fields_and_shows_them_everywhere(api: Api) -> None:
    fields = {"city": "Leeds", "age": 34, "ratio": 0.5, "vip": True, "dropped": None}
    added = await api.add_lead(tags=[" VIP", "evening", "vip"], fields=fields)

    expected_tags = ["evening", "vip"]
    expected_fields = {"city": "Leeds", "age": 34, "ratio": 0.5, "vip": True}
    assert (added["tags"], added["fields"]) == (expected_tags, expected_fields)
    one = ok_data(await api.client.get(f"{LEADS}/{added['lead_id']}", headers=api.auth))
    [listed] = ok_data(await api.client.get(LEADS, headers=api.auth))["items"]
    for lead in (one, listed):
        assert (lead["tags"], lead["fields"]) == (expected_tags, expected_fields)


async def test_a_lead_added_without_them_has_empty_ones(api: Api) -> None:
    added = await api.add_lead()

    assert (added["tags"], added["fields"]) == ([], {})


async def test_put_replaces_tags_and_merges_fields_removing_nulls(api: Api) -> None:
    lead = await api.add_lead(tags=["a", "b"], fields={"city": "Leeds", "age": 34})
    path = f"{LEADS}/{lead['lead_id']}"

    merged = ok_data(
        await api.client.put(path, json={"fields": {"age": None, "zip": "01234"}}, headers=api.auth)
    )
    retagged = ok_data(await api.client.put(path, json={"tags": ["C"]}, headers=api.auth))

    assert merged["fields"] == {"city": "Leeds", "zip": "01234"}
    assert merged["tags"] == ["a", "b"]
    assert retagged["tags"] == ["c"]
    assert retagged["fields"] == {"city": "Leeds", "zip": "01234"}
    assert ok_data(await api.client.put(path, json={"tags": []}, headers=api.auth))["tags"] == []


BAD_BODIES: list[tuple[dict[str, Any], str]] = [
    ({"tags": ["ok", "ok", "", "x"]}, "tags[2]"),
    ({"tags": ["ok", "no/slash"]}, "tags[1]"),
    ({"tags": ["x" * 65]}, "tags[0]"),
    ({"tags": [f"t{n}" for n in range(51)]}, "tags"),
    ({"tags": ["ok", 5]}, "tags[1]"),
    ({"tags": "vip"}, "tags"),
    ({"fields": {"City": "Leeds"}}, "fields.City"),
    ({"fields": {"city": "x" * 1001}}, "fields.city"),
    ({"fields": {"city": ["Leeds"]}}, "fields.city"),
    ({"fields": {"city": {"town": "Leeds"}}}, "fields.city"),
    ({"fields": {f"k{n}": n for n in range(51)}}, "fields"),
    ({"fields": {f"k{n}": "x" * 1000 for n in range(9)}}, "fields"),
    ({"fields": ["city"]}, "fields"),
]


@pytest.mark.parametrize(("body", "field"), BAD_BODIES, ids=[f for _, f in BAD_BODIES])
async def test_a_broken_rule_on_post_is_422_naming_the_field(
    api: Api, body: dict[str, Any], field: str
) -> None:
    full = {"name": "Ada", "email": "ada@example.com", **body}

    response = await api.client.post(LEADS, json=full, headers=api.auth)

    assert_invalid(response, field)
    assert await api.all_leads() == []


@pytest.mark.parametrize(("body", "field"), BAD_BODIES, ids=[f for _, f in BAD_BODIES])
async def test_a_broken_rule_on_put_is_422_naming_the_field(
    api: Api, body: dict[str, Any], field: str
) -> None:
    lead = await api.add_lead(tags=["keep"], fields={"keep": 1})

    response = await api.client.put(f"{LEADS}/{lead['lead_id']}", json=body, headers=api.auth)

    assert_invalid(response, field)
    [stored] = await api.all_leads()
    assert (stored["tags"], stored["fields"]) == (["keep"], {"keep": 1})


async def test_a_merge_past_50_fields_is_422_and_changes_nothing(api: Api) -> None:
    lead = await api.add_lead(fields={f"k{n}": n for n in range(50)})
    path = f"{LEADS}/{lead['lead_id']}"

    assert_invalid(
        await api.client.put(path, json={"fields": {"x": 1}}, headers=api.auth), "fields"
    )
    swapped = await api.client.put(path, json={"fields": {"x": 1, "k0": None}}, headers=api.auth)
    assert len(ok_data(swapped)["fields"]) == 50


# --- POST /api/v1/leads/{id}/tags --------------------------------------------------------


async def test_tags_are_added_and_removed_in_one_call(api: Api) -> None:
    lead = await api.add_lead(tags=["old", "keep"])

    response = await api.client.post(
        f"{LEADS}/{lead['lead_id']}/tags",
        json={"add": ["New ", "keep"], "remove": ["OLD", "absent"]},
        headers=api.auth,
    )

    changed = ok_data(response)
    assert response.json()["message"] == "Tags changed"
    assert changed["tags"] == ["keep", "new"]
    assert changed["updated_at"] >= lead["updated_at"]
    assert ok_data(await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=api.auth)) == changed


async def test_empty_lists_change_nothing(api: Api) -> None:
    lead = await api.add_lead(tags=["a"])

    same = ok_data(
        await api.client.post(f"{LEADS}/{lead['lead_id']}/tags", json={}, headers=api.auth)
    )

    assert same == lead


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"add": ["ok", ""]}, "add[1]"),
        ({"remove": ["no/slash"]}, "remove[0]"),
        ({"add": [f"t{n}" for n in range(51)]}, "add"),
        ({"add": "vip"}, "add"),
        ({"add": ["a"], "other": 1}, "other"),
    ],
)
async def test_a_broken_tag_change_is_422_naming_the_field(
    api: Api, body: dict[str, Any], field: str
) -> None:
    lead = await api.add_lead(tags=["a"])

    response = await api.client.post(f"{LEADS}/{lead['lead_id']}/tags", json=body, headers=api.auth)

    assert_invalid(response, field)


async def test_a_change_past_50_tags_is_422_naming_add_and_changes_nothing(api: Api) -> None:
    lead = await api.add_lead(tags=[f"t{n:02d}" for n in range(50)])
    path = f"{LEADS}/{lead['lead_id']}/tags"

    assert_invalid(await api.client.post(path, json={"add": ["zz"]}, headers=api.auth), "add")
    stored = ok_data(await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=api.auth))
    assert stored == lead


async def test_another_accounts_lead_is_404_for_the_tags_endpoint(api: Api) -> None:
    lead = await api.add_lead(tags=["mine"])
    other = await account_auth(api, "other-school")

    response = await api.client.post(
        f"{LEADS}/{lead['lead_id']}/tags", json={"add": ["theirs"]}, headers=other
    )

    assert_error(response, 404, "LEAD_NOT_FOUND")
    stored = ok_data(await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=api.auth))
    assert stored["tags"] == ["mine"]
    missing = await api.client.post(
        f"{LEADS}/ld_missing/tags", json={"add": ["x"]}, headers=api.auth
    )
    assert_error(missing, 404, "LEAD_NOT_FOUND")
