"""Segments over HTTP: GET /api/v1/leads and GET /api/v1/leads/count with the filter
parameters; unknown and malformed parameters are a 422 naming them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api, account_auth
from tests.support.envelope import LEADS, assert_invalid, ok_data

COUNT = LEADS + "/count"


async def listed(api: Api, params: Any) -> list[str]:
    page = ok_data(await api.client.get(LEADS, params=params, headers=api.auth))
    return [lead["email"] for lead in page["items"]]


async def counted(api: Api, params: Any) -> int:
    response = await api.client.get(COUNT, params=params, headers=api.auth)
    data = ok_data(response)
    assert set(data) == {"count"}
    assert response.json()["message"] == "Leads counted"
    return int(data["count"])


@pytest.fixture
async def school(api: Api) -> Api:
    await api.add_lead(
        email="ada@example.com",
        source="web",
        tags=["vip", "evening"],
        fields={"city": "Leeds", "age": 34, "newsletter": True},
    )
    await api.add_lead(
        email="bob@example.com",
        tags=["evening"],
        fields={"city": "York", "age": 41, "newsletter": False},
    )
    await api.add_lead(
        email="cy@example.com",
        tags=["weekend", "VIP"],
        fields={"city": "leeds", "age": "34", "zip": "01234"},
    )
    await api.add_lead(email="dee@example.com", fields={"newsletter": "true"})
    return api  # fmt: skip


SEGMENTS: list[tuple[Any, set[str]]] = [
    ({}, {"ada", "bob", "cy", "dee"}),
    ({"tag": "vip"}, {"ada", "cy"}),
    ([("tag", "VIP"), ("tag", "evening")], {"ada"}),
    ([("any_tag", "weekend"), ("any_tag", "evening")], {"ada", "bob", "cy"}),
    ({"not_tag": "vip"}, {"bob", "dee"}),
    ({"source": "web"}, {"ada"}),
    ({"email": "BOB@example.com"}, {"bob"}),
    ({"field.city": "Leeds"}, {"ada", "cy"}),  # text in any case
    ({"field.city": "LEEDS"}, {"ada", "cy"}),
    ({"field.age": "34"}, {"ada"}),  # a number: not cy's text "34"
    ({"field.age": "34.0"}, {"ada"}),
    ({"field.newsletter": "true"}, {"ada"}),  # a boolean: not dee's text "true"
    ({"field.newsletter": "false"}, {"bob"}),
    ({"field.zip": "01234"}, {"cy"}),  # not a JSON number: text
    ([("tag", "weekend"), ("field.city", "leeds")], {"cy"}),
    ({"created_after": "2000-01-01T00:00:00Z"}, {"ada", "bob", "cy", "dee"}),
    ({"created_before": "2000-01-01T00:00:00+01:00"}, set()),
]


@pytest.mark.parametrize(("params", "who"), SEGMENTS, ids=[str(p) for p, _ in SEGMENTS])
async def test_the_list_and_the_count_select_the_same_leads(
    school: Api, params: Any, who: set[str]
) -> None:
    emails = await listed(school, params)

    assert {email.split("@")[0] for email in emails} == who
    assert await counted(school, params) == len(who)


async def test_a_segment_pages_with_its_cursor(school: Api) -> None:
    first = ok_data(await school.client.get(LEADS, params={"tag": "evening", "limit": "1"},
                                            headers=school.auth))  # fmt: skip
    rest = ok_data(
        await school.client.get(
            LEADS,
            params={"tag": "evening", "limit": "1", "cursor": first["next_cursor"]},
            headers=school.auth,
        )
    )

    emails = [lead["email"] for lead in first["items"] + rest["items"]]
    assert sorted(emails) == ["ada@example.com", "bob@example.com"]
    assert rest["next_cursor"] is None


async def test_counts_are_per_account(school: Api) -> None:
    other = await account_auth(school, "other-school")

    response = await school.client.get(COUNT, params={"tag": "vip"}, headers=other)

    assert ok_data(response) == {"count": 0}


BAD: list[tuple[Any, str]] = [
    ({"colour": "red"}, "colour"),
    ({"tag": ""}, "tag"),
    ({"tag": "no/slash"}, "tag"),
    ({"any_tag": "x" * 65}, "any_tag"),
    ({"not_tag": " "}, "not_tag"),
    ([("source", "a"), ("source", "b")], "source"),
    ({"created_after": "yesterday"}, "created_after"),
    ({"created_before": "2026-03-02T09:30:00"}, "created_before"),
    ({"field.City": "x"}, "field.City"),
    ({"field.city": "x" * 1001}, "field.city"),
    ({"source": "a\x00b"}, "source"),
]


@pytest.mark.parametrize(("params", "field"), BAD, ids=[f for _, f in BAD])
async def test_unknown_and_malformed_parameters_are_422_naming_them(
    api: Api, params: Any, field: str
) -> None:
    assert_invalid(await api.client.get(LEADS, params=params, headers=api.auth), field)
    assert_invalid(await api.client.get(COUNT, params=params, headers=api.auth), field)


@pytest.mark.parametrize("name", ["limit", "cursor"])
async def test_the_count_takes_no_paging(api: Api, name: str) -> None:
    assert_invalid(await api.client.get(COUNT, params={name: "1"}, headers=api.auth), name)
