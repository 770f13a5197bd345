"""GET /api/v1/leads/{lead_id}/timeline (in-process, memory adapters): what happened to a
lead, newest first (created, updated, tags changed, imported, its messages with their
events, its suppression), in cursor pages that add up to the whole; refusals; another
account's lead is 404."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api, account_auth, plain_email
from tests.support.envelope import (
    ISO_UTC,
    LEADS,
    MESSAGE_FIELDS,
    SEND,
    SUPPRESSIONS,
    assert_error,
    ok_data,
)

ENTRY_FIELDS = {"at", "kind", "detail", "message"}


async def timeline(api: Api, lead_id: str, **params: Any) -> dict[str, Any]:
    response = await api.client.get(f"{LEADS}/{lead_id}/timeline", params=params,
                                    headers=api.auth)  # fmt: skip
    assert response.json()["message"] == "Timeline retrieved", response.text
    data: dict[str, Any] = ok_data(response)
    assert set(data) == {"lead_id", "items", "next_cursor"}
    assert data["lead_id"] == lead_id
    for entry in data["items"]:
        assert set(entry) == ENTRY_FIELDS, entry
        assert ISO_UTC.match(entry["at"]), entry
        assert (entry["message"] is None) is (entry["kind"] != "message"), entry
    ats = [entry["at"] for entry in data["items"]]
    assert ats == sorted(ats, reverse=True)
    return data


async def everything(api: Api, lead_id: str, limit: int) -> list[dict[str, Any]]:
    """Every entry, walking the pages of ``limit``."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = (
            {"limit": limit} if cursor is None else {"limit": limit, "cursor": cursor}
        )
        page = await timeline(api, lead_id, **params)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


async def test_the_timeline_tells_the_lead_s_story_newest_first(api: Api) -> None:
    lead = await api.add_lead(email="ada@example.com", fields={"city": "Leeds"})
    at = f"{LEADS}/{lead['lead_id']}"
    changed = await api.client.put(at, json={"name": "Ada L", "fields": {"city": "York"}},
                                   headers=api.auth)  # fmt: skip
    assert changed.status_code == 200, changed.text
    tagged = await api.client.post(f"{at}/tags", json={"add": ["vip"]}, headers=api.auth)
    assert tagged.status_code == 200, tagged.text
    sent = await api.client.post(SEND, json=plain_email(to="Ada <ADA@example.com>"),
                                 headers=api.auth)  # fmt: skip
    assert sent.status_code == 200, sent.text
    await api.client.post(SEND, json=plain_email(to="grace@example.com"), headers=api.auth)
    suppressed = await api.client.post(
        SUPPRESSIONS, json={"email": "ada@example.com"}, headers=api.auth
    )
    assert suppressed.status_code == 201, suppressed.text

    items = (await timeline(api, lead["lead_id"]))["items"]

    assert [e["kind"] for e in items] == [
        "suppressed", "message", "tags_changed", "updated", "created"
    ]  # fmt: skip
    suppression, message, tags, updated, created = items
    assert suppression["detail"] == {"reason": "manual"}
    assert set(message["message"]) == MESSAGE_FIELDS
    assert message["message"]["id"] == sent.json()["data"]["id"]
    assert message["detail"] == {}
    assert tags["detail"] == {"add": ["vip"], "remove": []}
    assert updated["detail"] == {"fields": ["name", "fields.city"]}
    assert (created["detail"], created["at"]) == ({}, lead["created_at"])


async def test_an_import_is_on_the_timeline_of_each_lead_it_wrote(api: Api) -> None:
    lead = await api.add_lead(email="ada@example.com")
    done = await api.import_csv("email,name\nada@example.com,Ada L\ngrace@example.com,Grace\n")

    ada = (await timeline(api, lead["lead_id"]))["items"]
    [grace_lead] = [x for x in await api.all_leads() if x["email"] == "grace@example.com"]
    grace = (await timeline(api, grace_lead["lead_id"]))["items"]

    assert [e["kind"] for e in ada] == ["imported", "created"]
    assert ada[0]["detail"] == {"import_id": done["id"], "created": False}
    assert [e["kind"] for e in grace] == ["imported", "created"]
    assert grace[0]["detail"] == {"import_id": done["id"], "created": True}
    assert grace[0]["at"] == grace[1]["at"]  # one moment: the import after the creation


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_pages_add_up_to_the_whole_even_past_the_creation(api: Api, limit: int) -> None:
    # Messages sent to the address before the lead was added come after its creation.
    for subject in ("First", "Second"):
        await api.client.post(SEND, json=plain_email(subject=subject), headers=api.auth)
    lead = await api.add_lead(email="ada@example.com")
    for tag in ("a", "b"):
        await api.client.post(f"{LEADS}/{lead['lead_id']}/tags", json={"add": [tag]},
                              headers=api.auth)  # fmt: skip

    whole = (await timeline(api, lead["lead_id"]))["items"]
    paged = await everything(api, lead["lead_id"], limit)

    assert [e["kind"] for e in whole] == [
        "tags_changed", "tags_changed", "created", "message", "message"
    ]  # fmt: skip
    assert paged == whole


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"cursor": "nope"}, "cursor"),
     ({"cursor": "123.7.x"}, "cursor")],
)  # fmt: skip
async def test_a_bad_page_is_a_422_naming_it(api: Api, params: dict[str, Any], field: str) -> None:
    lead = await api.add_lead()

    response = await api.client.get(f"{LEADS}/{lead['lead_id']}/timeline", params=params,
                                    headers=api.auth)  # fmt: skip

    body = assert_error(response, 422, "VALIDATION_FAILED")
    assert field in response.text, body


async def test_another_account_s_lead_or_a_missing_one_is_404(api: Api) -> None:
    lead = await api.add_lead()
    stranger = await account_auth(api, "acc_stranger")

    for response in (
        await api.client.get(f"{LEADS}/{lead['lead_id']}/timeline", headers=stranger),
        await api.client.get(f"{LEADS}/ld_missing/timeline", headers=api.auth),
    ):
        assert_error(response, 404, "LEAD_NOT_FOUND")
