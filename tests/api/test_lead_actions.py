"""POST /api/v1/leads/actions and GET /api/v1/leads/actions/{id} (in-process, memory
adapters): a bulk action queued (202), run in the background to done with its counts;
tags added and removed on exactly the segment's leads, leads deleted while campaign
recipients, messages and suppressions stay; a dry run counts and does nothing; bad input
refused naming the field, nothing stored; another account's action is 404 and its leads
are never touched."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.api.support import Api, account_auth, plain_email
from tests.support.envelope import (
    ACTIONS,
    ISO_UTC,
    LEADS,
    SEND,
    SUPPRESSIONS,
    assert_error,
    ok_data,
)

ACTION_FIELDS = {
    "id", "action", "tags", "filter", "status", "total", "done", "left", "changed",
    "skipped", "failed", "eta_seconds", "error", "created_at", "started_at", "finished_at",
}  # fmt: skip


async def started(api: Api, body: dict[str, Any], auth: dict[str, str] | None = None) -> Any:
    response = await api.client.post(ACTIONS, json=body, headers=auth or api.auth)
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["success"], body["message"], body["error"]) == (True, "Bulk action queued", "")
    data: dict[str, Any] = body["data"]
    assert set(data) == ACTION_FIELDS
    assert data["status"] in ("queued", "running", "done")
    assert ISO_UTC.match(data["created_at"])
    return data


async def finished(api: Api, action_id: str, auth: dict[str, str] | None = None) -> Any:
    """The action once done or failed (the app runs it in its own event loop)."""
    for _ in range(1_000):
        response = await api.client.get(f"{ACTIONS}/{action_id}", headers=auth or api.auth)
        assert response.status_code == 200, response.text
        found = response.json()["data"]
        assert set(found) == ACTION_FIELDS
        if found["status"] in ("done", "failed"):
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"action {action_id} still {found['status']} after 10 s")


async def tags_by_email(api: Api, auth: dict[str, str] | None = None) -> dict[str, list[str]]:
    return {lead["email"]: lead["tags"] for lead in await api.all_leads(auth)}


async def test_tags_are_added_to_exactly_the_segment_and_counted(api: Api) -> None:
    await api.add_lead(email="ada@example.com", tags=["march"], fields={"city": "Leeds"})
    await api.add_lead(email="bob@example.com", tags=["march", "cohort-b"])
    await api.add_lead(email="cy@example.com", tags=["april"], fields={"city": "leeds"})
    await api.add_lead(email="di@example.com", tags=["march"], fields={"city": "York"})

    action = await started(api, {"action": "add_tags", "tags": ["Cohort-B", "paid"],
                                 "filter": {"tag": "march", "field.city": "LEEDS"}})  # fmt: skip
    assert (action["action"], action["tags"]) == ("add_tags", ["cohort-b", "paid"])
    assert action["filter"] == {"tag": ["march"], "field.city": "LEEDS"}
    done = await finished(api, action["id"])

    assert done["status"] == "done", done
    assert (done["total"], done["done"], done["left"]) == (1, 1, 0)
    assert (done["changed"], done["skipped"], done["failed"]) == (1, 0, 0)
    assert done["eta_seconds"] is None
    assert ISO_UTC.match(done["started_at"])
    assert ISO_UTC.match(done["finished_at"])
    assert await tags_by_email(api) == {
        "ada@example.com": ["cohort-b", "march", "paid"],
        "bob@example.com": ["cohort-b", "march"],
        "cy@example.com": ["april"],
        "di@example.com": ["march"],
    }


async def test_tags_are_removed_and_leads_that_had_none_are_skipped(api: Api) -> None:
    await api.add_lead(email="ada@example.com", tags=["march", "vip"])
    await api.add_lead(email="bob@example.com", tags=["march"])
    await api.add_lead(email="cy@example.com", tags=["vip"])

    action = await started(api, {"action": "remove_tags", "tags": ["vip"], "filter": {}})
    done = await finished(api, action["id"])

    assert (done["total"], done["changed"], done["skipped"]) == (3, 2, 1)
    assert await tags_by_email(api) == {
        "ada@example.com": ["march"],
        "bob@example.com": ["march"],
        "cy@example.com": [],
    }
    # The lead's timeline says so, and which action did it.
    ada = next(lead for lead in await api.all_leads() if lead["email"] == "ada@example.com")
    response = await api.client.get(f"{LEADS}/{ada['lead_id']}/timeline", headers=api.auth)
    first = ok_data(response)["items"][0]
    assert (first["kind"], first["detail"]) == (
        "tags_changed",
        {"add": [], "remove": ["vip"], "action_id": action["id"]},
    )


async def test_a_delete_removes_the_segment_and_keeps_messages_and_suppressions(
    api: Api,
) -> None:
    await api.add_lead(email="ada@example.com", source="fair")
    await api.add_lead(email="bob@example.com", source="fair")
    await api.add_lead(email="cy@example.com", source="web")
    sent = await api.client.post(SEND, json=plain_email(to="ada@example.com"), headers=api.auth)
    assert sent.status_code == 200, sent.text
    message_id = ok_data(sent)["id"]
    suppressed = await api.client.post(
        SUPPRESSIONS, json={"email": "bob@example.com"}, headers=api.auth
    )
    assert suppressed.status_code in (200, 201), suppressed.text

    action = await started(api, {"action": "delete", "filter": {"source": "fair"}})
    done = await finished(api, action["id"])

    assert (done["action"], done["tags"], done["total"], done["changed"]) == ("delete", [], 2, 2)
    assert set(await tags_by_email(api)) == {"cy@example.com"}
    message = await api.client.get(f"/api/v1/email/messages/{message_id}", headers=api.auth)
    assert message.status_code == 200, message.text
    listed = ok_data(await api.client.get(SUPPRESSIONS, headers=api.auth))["items"]
    assert [s["email"] for s in listed] == ["bob@example.com"]


async def test_a_dry_run_counts_and_does_nothing(api: Api) -> None:
    await api.add_lead(email="ada@example.com", tags=["march"])
    await api.add_lead(email="bob@example.com", tags=["march"])
    await api.add_lead(email="cy@example.com")

    response = await api.client.post(
        ACTIONS, json={"action": "delete", "filter": {"tag": "march"}, "dry_run": True},
        headers=api.auth,
    )  # fmt: skip

    assert response.status_code == 200, response.text
    assert response.json()["message"] == "Dry run: nothing done"
    assert ok_data(response) == {
        "dry_run": True, "action": "delete", "tags": [], "filter": {"tag": ["march"]},
        "total": 2,
    }  # fmt: skip
    assert len(await api.all_leads()) == 3
    assert await api.adapters.lead_actions.unfinished() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "tag", "tags": ["x"], "filter": {}}, "action"),
        ({"action": "add_tags", "filter": {}}, "tags"),
        ({"action": "add_tags", "tags": [], "filter": {}}, "tags"),
        ({"action": "remove_tags", "tags": ["no/slash"], "filter": {}}, "tags[0]"),
        ({"action": "add_tags", "tags": [f"t{n}" for n in range(51)], "filter": {}}, "tags"),
        ({"action": "delete", "tags": ["x"], "filter": {}}, "tags"),
        ({"action": "delete", "filter": {"colour": "red"}}, "filter.colour"),
        ({"action": "delete", "filter": {"created_after": "yesterday"}}, "filter.created_after"),
        ({"action": "delete", "filter": {"tag": []}}, "filter.tag"),
    ],
)
async def test_bad_input_is_422_naming_the_field_and_nothing_is_done(
    api: Api, body: dict[str, Any], field: str
) -> None:
    await api.add_lead(email="ada@example.com", tags=["x"])

    failure = assert_error(await api.client.post(ACTIONS, json=body, headers=api.auth), 422,
                           "VALIDATION_FAILED")  # fmt: skip

    assert field in {f["field"] for f in failure["data"]["errors"]}, failure
    assert await api.adapters.lead_actions.unfinished() == []
    assert await tags_by_email(api) == {"ada@example.com": ["x"]}


@pytest.mark.parametrize(
    "body",
    [
        {"action": "delete"},  # no filter: `{}` must be said
        {"action": "delete", "filter": {}, "extra": 1},
        {"action": "delete", "filter": []},
        {"action": "delete", "filter": {}, "dry_run": "yes"},
    ],
)
async def test_a_body_of_the_wrong_shape_is_refused(api: Api, body: dict[str, Any]) -> None:
    await api.add_lead(email="ada@example.com")

    response = await api.client.post(ACTIONS, json=body, headers=api.auth)

    assert_error(response, 422, "VALIDATION_FAILED")
    assert len(await api.all_leads()) == 1


async def test_another_accounts_action_is_404_and_its_leads_are_never_touched(api: Api) -> None:
    other = await account_auth(api, "other-school")
    await api.add_lead(email="ada@example.com", tags=["march"])
    await api.add_lead(headers=other, email="ada@example.com", tags=["march"])

    action = await started(api, {"action": "delete", "filter": {"tag": "march"}})
    done = await finished(api, action["id"])

    assert done["changed"] == 1
    assert_error(await api.client.get(f"{ACTIONS}/{action['id']}", headers=other), 404,
                 "ACTION_NOT_FOUND")  # fmt: skip
    assert await tags_by_email(api) == {}
    assert await tags_by_email(api, other) == {"ada@example.com": ["march"]}
    assert_error(await api.client.get(f"{ACTIONS}/act_nosuchaction", headers=api.auth), 404,
                 "ACTION_NOT_FOUND")  # fmt: skip


async def test_an_id_not_of_an_actions_shape_is_422(api: Api) -> None:
    response = await api.client.get(f"{ACTIONS}/imp_notanaction", headers=api.auth)

    assert_error(response, 422, "VALIDATION_FAILED")
