"""``q`` over HTTP (in-process, memory adapters): the same search on GET /api/v1/leads, its
count and its CSV export, combined with the other filters and in a campaign's audience;
refused when malformed; never another account's leads."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from tests.api.campaign_support import create
from tests.api.support import Api, account_auth
from tests.support.envelope import EXPORT, LEADS, assert_invalid, ok_data

COUNT = LEADS + "/count"


@pytest.fixture
async def school(api: Api) -> Api:
    await api.add_lead(name="Ada Lovelace", email="ada@example.com", tags=["march"])
    await api.add_lead(name="Tom Adams", email="tom@example.com")
    await api.add_lead(name="Mary-Jane Smith", email="mj@example.org", fields={"city": "Leeds"})
    await api.add_lead(name="Grace Hopper", email="adagrace@example.net", tags=["march"])
    return api


async def emails(api: Api, params: Any, headers: dict[str, str] | None = None) -> set[str]:
    """Who the list finds, checked against the count and the export of the same query."""
    auth = headers or api.auth
    page = ok_data(await api.client.get(LEADS, params=params, headers=auth))
    listed = {lead["email"] for lead in page["items"]}
    counted = ok_data(await api.client.get(COUNT, params=params, headers=auth))["count"]
    exported = await api.client.get(EXPORT, params=params, headers=auth)
    assert exported.status_code == 200, exported.text
    rows = {row["email"] for row in csv.DictReader(io.StringIO(exported.text))}
    assert counted == len(listed)
    assert rows == listed
    return listed


@pytest.mark.parametrize(
    ("params", "who"),
    [
        ({"q": "ada"}, {"ada@example.com", "tom@example.com", "adagrace@example.net"}),
        ({"q": "ADA"}, {"ada@example.com", "tom@example.com", "adagrace@example.net"}),
        ({"q": "lovel"}, {"ada@example.com"}),
        ({"q": "jane"}, {"mj@example.org"}),
        ({"q": "mj@"}, {"mj@example.org"}),
        ({"q": "hop"}, {"adagrace@example.net"}),
        ({"q": "opper"}, set()),
        ({"q": "  "}, {"ada@example.com", "tom@example.com", "mj@example.org",
                       "adagrace@example.net"}),  # blank: no search
        ({"q": "ada", "tag": "march"}, {"ada@example.com", "adagrace@example.net"}),
        ({"q": "m", "field.city": "leeds"}, {"mj@example.org"}),
    ],
)  # fmt: skip
async def test_q_finds_the_same_leads_in_the_list_the_count_and_the_export(
    school: Api, params: dict[str, str], who: set[str]
) -> None:
    assert await emails(school, params) == who


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "a" * 255}, "at most 254"),
        ({"q": "ada\x00"}, "NUL"),
        ([("q", "ada"), ("q", "tom")], "only once"),
    ],
)
@pytest.mark.parametrize("path", [LEADS, COUNT, EXPORT])
async def test_a_bad_q_is_a_422_naming_it(
    school: Api, path: str, params: Any, message: str
) -> None:
    response = await school.client.get(path, params=params, headers=school.auth)

    body = assert_invalid(response, "q")
    assert message in response.text, body


async def test_q_in_a_campaign_audience_and_in_another_account(school: Api) -> None:
    campaign = await create(school, audience={"q": "ada", "tag": "march"})
    stranger = await account_auth(school, "acc_stranger")

    assert campaign["audience"] == {"q": "ada", "tag": ["march"]}
    assert campaign["counts"]["total"] == 2
    assert await emails(school, {"q": "ada"}, headers=stranger) == set()
