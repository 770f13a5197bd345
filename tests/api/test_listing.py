"""GET /api/v1/leads: newest first, one page at a time, filtered by email and source."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import EPOCH, Api, minutes
from tests.support.envelope import LEADS, assert_invalid, assert_ok


async def _walk(api: Api, **params: str) -> list[list[str]]:
    """The lead ids of every page, following next_cursor until it is null."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        query = dict(params) if cursor is None else {**params, "cursor": cursor}
        page = assert_ok(await api.client.get(LEADS, params=query, headers=api.auth))["data"]
        assert set(page) == {"items", "next_cursor"}
        pages.append([lead["lead_id"] for lead in page["items"]])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 100, "the cursor never ends"


async def test_an_empty_account_lists_nothing(api: Api) -> None:
    envelope = assert_ok(await api.client.get(LEADS, headers=api.auth))

    assert envelope["data"] == {"items": [], "next_cursor": None}


async def test_leads_are_listed_newest_first(api: Api) -> None:
    seeded = [
        await api.seed(email=f"l{n}@example.com", created_at=EPOCH + minutes(n))
        for n in (2, 0, 3, 1)
    ]
    newest_first = sorted(seeded, key=lambda lead: lead.created_at, reverse=True)

    envelope = assert_ok(await api.client.get(LEADS, headers=api.auth))

    assert [lead["lead_id"] for lead in envelope["data"]["items"]] == [
        lead.lead_id for lead in newest_first
    ]


async def test_leads_added_over_http_list_newest_first(api: Api) -> None:
    added = [await api.add_lead(email=f"h{n}@example.com") for n in range(5)]

    items = await api.all_leads()

    assert {lead["lead_id"] for lead in items} == {lead["lead_id"] for lead in added}
    created = [lead["created_at"] for lead in items]
    assert created == sorted(created, reverse=True)


async def test_walking_every_page_yields_each_lead_once_in_order(api: Api) -> None:
    seeded = [
        await api.seed(email=f"p{n}@example.com", created_at=EPOCH + minutes(n)) for n in range(7)
    ]

    pages = await _walk(api, limit="3")

    assert [len(page) for page in pages] == [3, 3, 1]
    assert [i for page in pages for i in page] == [lead.lead_id for lead in reversed(seeded)]


async def test_a_full_last_page_has_no_next_cursor(api: Api) -> None:
    for n in range(6):
        await api.seed(email=f"f{n}@example.com", created_at=EPOCH + minutes(n))

    pages = await _walk(api, limit="3")

    assert [len(page) for page in pages] == [3, 3]


async def test_leads_created_in_the_same_instant_are_paged_without_loss_or_repeat(
    api: Api,
) -> None:
    seeded = [await api.seed(email=f"t{n}@example.com", created_at=EPOCH) for n in range(5)]

    pages = await _walk(api, limit="2")

    walked = [i for page in pages for i in page]
    assert sorted(walked) == sorted(lead.lead_id for lead in seeded)
    assert len(walked) == len(set(walked))


async def test_a_lead_added_mid_walk_does_not_shift_the_pages(api: Api) -> None:
    seeded = [
        await api.seed(email=f"m{n}@example.com", created_at=EPOCH + minutes(n)) for n in range(4)
    ]
    first = assert_ok(await api.client.get(LEADS, params={"limit": "2"}, headers=api.auth))
    await api.add_lead(email="newcomer@example.com")

    rest = assert_ok(
        await api.client.get(
            LEADS, params={"limit": "2", "cursor": first["data"]["next_cursor"]}, headers=api.auth
        )
    )

    walked = [lead["lead_id"] for lead in first["data"]["items"] + rest["data"]["items"]]
    assert walked == [lead.lead_id for lead in reversed(seeded)]
    assert rest["data"]["next_cursor"] is None


async def test_the_default_page_is_50_leads(api: Api) -> None:
    for n in range(51):
        await api.seed(email=f"d{n}@example.com", created_at=EPOCH + minutes(n))

    page = assert_ok(await api.client.get(LEADS, headers=api.auth))["data"]

    assert len(page["items"]) == 50
    assert page["next_cursor"] is not None


@pytest.mark.parametrize("limit", ["1", "100"])
async def test_limits_at_the_bounds_are_accepted(api: Api, limit: str) -> None:
    for n in range(2):
        await api.seed(email=f"b{n}@example.com", created_at=EPOCH + minutes(n))

    page = assert_ok(await api.client.get(LEADS, params={"limit": limit}, headers=api.auth))

    assert len(page["data"]["items"]) == min(int(limit), 2)


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "9" * 30])
async def test_a_limit_outside_1_to_100_is_422(api: Api, limit: str) -> None:
    response = await api.client.get(LEADS, params={"limit": limit}, headers=api.auth)

    assert_invalid(response, "limit")


BAD_CURSORS: dict[str, str] = {
    "garbage": "not-a-cursor!!",
    "empty": "",
    "one-char": "a",
    "no-id": "1769904000000000.",
    "no-moment": ".ld_x",
    "a-date-not-a-count": "2020-01-01T00:00:00.ld_x",
    "negative": "-1.ld_x",
    "too-many-digits": "123456789012345678.ld_x",
    "id-too-long": "1." + "x" * 41,
    "space-in-id": "1.ld x",
    "base64-json-as-cursors-once-were": "WyIyMDIwLTAxLTAxVDAwOjAwOjAwKzAwOjAwIiwibGRfeCJd",
}


@pytest.mark.parametrize("cursor", list(BAD_CURSORS.values()), ids=list(BAD_CURSORS))
async def test_a_cursor_the_service_did_not_issue_is_422_naming_cursor(
    api: Api, cursor: str
) -> None:
    response = await api.client.get(LEADS, params={"cursor": cursor}, headers=api.auth)

    assert_invalid(response, "cursor")


async def test_filter_by_email_ignores_case(api: Api) -> None:
    ada = await api.add_lead(email="Ada@Example.com")
    await api.add_lead(email="grace@example.com")

    response = await api.client.get(LEADS, params={"email": "ADA@example.COM"}, headers=api.auth)

    assert [lead["lead_id"] for lead in assert_ok(response)["data"]["items"]] == [ada["lead_id"]]


async def test_filter_by_an_invalid_email_finds_nothing_rather_than_failing(api: Api) -> None:
    await api.add_lead(email="ada@example.com")

    response = await api.client.get(LEADS, params={"email": "not an email"}, headers=api.auth)

    assert assert_ok(response)["data"] == {"items": [], "next_cursor": None}


async def test_filter_by_source(api: Api) -> None:
    webinar = [
        await api.seed(email=f"w{n}@example.com", source="webinar", created_at=EPOCH + minutes(n))
        for n in range(3)
    ]
    await api.seed(email="ads@example.com", source="ads", created_at=EPOCH + minutes(9))

    pages = await _walk(api, source="webinar", limit="2")

    assert [i for page in pages for i in page] == [lead.lead_id for lead in reversed(webinar)]


async def test_filters_combine(api: Api) -> None:
    await api.add_lead(email="ada@example.com", source="ads")
    await api.add_lead(email="grace@example.com", source="webinar")

    both = await api.client.get(
        LEADS, params={"email": "ada@example.com", "source": "webinar"}, headers=api.auth
    )
    match = await api.client.get(
        LEADS, params={"email": "ada@example.com", "source": "ads"}, headers=api.auth
    )

    assert assert_ok(both)["data"]["items"] == []
    items: list[Any] = assert_ok(match)["data"]["items"]
    assert [lead["email"] for lead in items] == ["ada@example.com"]
