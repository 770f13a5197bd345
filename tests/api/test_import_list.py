"""GET /api/v1/leads/imports: the account's imports, newest first, in cursor pages, each as
GET .../imports/{id} gives it; one account's imports only (issue 27)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api, account_auth
from tests.support.envelope import IMPORTS, assert_invalid, assert_ok


async def imported(api: Api, n: int) -> str:
    done = await api.import_csv(f"email,name\nlead{n}@example.com,Lead {n}\n")
    return str(done["id"])


async def page(api: Api, headers: dict[str, str] | None = None, **params: Any) -> dict[str, Any]:
    response = await api.client.get(IMPORTS, params=params, headers=headers or api.auth)
    data = assert_ok(response)["data"]
    assert set(data) == {"items", "next_cursor"}
    return dict(data)


async def test_imports_come_newest_first_each_as_get_gives_it(api: Api) -> None:
    made = [await imported(api, n) for n in range(3)]

    listed = await page(api)

    assert [item["id"] for item in listed["items"]] == made[::-1]
    assert listed["next_cursor"] is None
    one = assert_ok(await api.client.get(f"{IMPORTS}/{made[0]}", headers=api.auth))["data"]
    assert listed["items"][-1] == one
    assert one["status"] == "done"
    assert one["created"] == 1


async def test_cursor_pages_hold_every_import_once(api: Api) -> None:
    made = [await imported(api, n) for n in range(5)]

    seen: list[str] = []
    cursor = None
    while True:
        listed = await page(api, limit=2, **({"cursor": cursor} if cursor else {}))
        assert len(listed["items"]) <= 2
        seen += [item["id"] for item in listed["items"]]
        cursor = listed["next_cursor"]
        if cursor is None:
            break

    assert seen == made[::-1]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"cursor": "nope"}, "cursor")],
)
async def test_a_bad_parameter_is_422_naming_it(
    api: Api, params: dict[str, Any], field: str
) -> None:
    assert_invalid(await api.client.get(IMPORTS, params=params, headers=api.auth), field)


async def test_another_accounts_imports_never_show(api: Api) -> None:
    other = await account_auth(api, "globex")
    await imported(api, 1)

    assert await page(api, other) == {"items": [], "next_cursor": None}
