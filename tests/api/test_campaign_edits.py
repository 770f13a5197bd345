"""PUT and DELETE /api/v1/campaigns/{id} (in-process, memory adapters): a draft's body
changed in part and kept a draft; a scheduled campaign changed and frozen anew; every
refusal with its code and nothing changed; 409 for any other status; a draft deleted; and
another account can do neither."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.config import Settings
from tests.api.campaign_support import campaign_of, create, march_leads
from tests.api.support import Api, account_auth, open_api
from tests.support.envelope import CAMPAIGNS, assert_error, assert_invalid

FAR = "2999-03-02T09:30:00Z"


async def put(api: Api, campaign_id: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    return await api.client.put(
        f"{CAMPAIGNS}/{campaign_id}", json=body, headers=headers or api.auth
    )


async def shown(api: Api, campaign_id: str) -> dict[str, Any]:
    return campaign_of(await api.client.get(f"{CAMPAIGNS}/{campaign_id}", headers=api.auth))


async def test_a_draft_changes_what_is_given_keeps_the_rest_and_stays_a_draft(api: Api) -> None:
    await march_leads(api, 2)
    await api.add_lead(email="april@example.com", tags=["april"])
    draft = await create(api, draft=True, reply_to="replies@example.com", send_at=FAR)

    response = await put(
        api,
        draft["id"],
        {"name": "April open day", "audience": {"tag": "april"}, "reply_to": None},
    )

    edited = campaign_of(response)
    assert response.json()["message"] == "Campaign updated"
    assert (edited["id"], edited["status"], edited["name"]) == (
        draft["id"],
        "draft",
        "April open day",
    )
    assert (edited["audience"], edited["reply_to"]) == ({"tag": ["april"]}, None)
    assert edited["counts"]["pending"] == 1  # the leads the new audience matches now
    kept = ("template_id", "variables", "from", "send_at", "created_at")
    assert {k: edited[k] for k in kept} == {k: draft[k] for k in kept}
    assert edited["updated_at"] >= draft["updated_at"]
    assert await shown(api, draft["id"]) == edited


async def test_a_scheduled_campaign_is_frozen_anew_and_runs_once_send_at_is_gone(
    api: Api,
) -> None:
    await march_leads(api, 2)
    april = await api.add_lead(email="april@example.com", tags=["april"])
    scheduled = await create(api, send_at=FAR)
    assert (scheduled["status"], scheduled["counts"]["total"]) == ("scheduled", 2)

    moved = campaign_of(
        await put(
            api, scheduled["id"], {"audience": {"tag": "april"}, "send_at": "2998-01-01T00:00:00Z"}
        )
    )
    recipients = await api.client.get(f"{CAMPAIGNS}/{scheduled['id']}/recipients", headers=api.auth)
    now = campaign_of(await put(api, scheduled["id"], {"send_at": None}))

    assert (moved["status"], moved["send_at"]) == ("scheduled", "2998-01-01T00:00:00.000Z")
    assert moved["counts"] == {**moved["counts"], "total": 1, "pending": 1}
    assert [r["lead_id"] for r in recipients.json()["data"]["items"]] == [april["lead_id"]]
    assert (now["status"], now["send_at"], now["counts"]["total"]) == ("running", None, 1)
    assert now["started_at"] is not None
    assert now["template_version"] is not None  # frozen again at this start


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({}, 422, "VALIDATION_FAILED", "body"),
        ({"draft": True}, 422, "VALIDATION_FAILED", "draft"),
        ({"name": "  "}, 422, "VALIDATION_FAILED", "name"),
        ({"name": None}, 422, "VALIDATION_FAILED", "name"),
        ({"audience": {"colour": "red"}}, 422, "VALIDATION_FAILED", "audience.colour"),
        ({"send_at": "soon"}, 422, "VALIDATION_FAILED", "send_at"),
        ({"from": "nobody"}, 422, "VALIDATION_FAILED", "from"),
        ({"variables": {"school_name": "N"}}, 422, "VALIDATION_FAILED", "variables.courses_link"),
        ({"template_id": "no-such-template"}, 404, "TEMPLATE_NOT_FOUND", None),
        ({"audience": {"tag": "nobody"}}, 422, "AUDIENCE_EMPTY", None),
        (["name"], 422, "VALIDATION_FAILED", "body"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("draft", [True, False], ids=["draft", "scheduled"])
async def test_every_refusal_changes_nothing(
    api: Api, body: Any, status: int, code: str, field: str | None, draft: bool
) -> None:
    await march_leads(api, 2)
    made = await create(api, draft=draft, send_at=FAR)
    before = await shown(api, made["id"])

    response = await put(api, made["id"], body)

    if field is None:
        assert_error(response, status, code)
    else:
        assert_invalid(response, field)
    assert await shown(api, made["id"]) == before


async def test_the_sender_is_held_to_the_policy_and_null_gives_the_default() -> None:
    policy = Settings(
        migrate_on_start=False,
        allowed_sender_domains=("example.com",),
        email_default_from="Team <team@example.com>",
    )
    async with open_api(settings=policy) as api:
        await march_leads(api, 1)
        sender: dict[str, Any] = {"from": "ada@example.com"}
        draft = await create(api, None, draft=True, **sender)

        elsewhere = await put(api, draft["id"], {"from": "ada@elsewhere.org"})
        assert_error(elsewhere, 403, "SENDER_NOT_ALLOWED")
        assert (await shown(api, draft["id"]))["from"] == "ada@example.com"
        defaulted = campaign_of(await put(api, draft["id"], {"from": None}))
        assert defaulted["from"] == '"Team" <team@example.com>'


async def test_only_a_draft_or_scheduled_campaign_changes_and_only_a_draft_is_deleted(
    api: Api,
) -> None:
    await march_leads(api, 2)
    running = await create(api)
    paused = campaign_of(
        await api.client.post(f"{CAMPAIGNS}/{(await create(api))['id']}/pause", headers=api.auth)
    )
    scheduled = await create(api, send_at=FAR)
    cancelled = campaign_of(
        await api.client.post(
            f"{CAMPAIGNS}/{(await create(api, draft=True))['id']}/cancel", headers=api.auth
        )
    )

    for campaign in (running, paused, cancelled):
        refused = assert_error(await put(api, campaign["id"], {"name": "x"}), 409, "CAMPAIGN_STATE")
        assert f"is {campaign['status']}: it cannot be changed" in refused["error"]
        assert "only a campaign that is draft or scheduled can" in refused["error"]
        assert (await shown(api, campaign["id"]))["name"] == campaign["name"]
    for campaign in (running, paused, scheduled, cancelled):
        response = await api.client.delete(f"{CAMPAIGNS}/{campaign['id']}", headers=api.auth)
        refused = assert_error(response, 409, "CAMPAIGN_STATE")
        assert f"is {campaign['status']}: it cannot be deleted" in refused["error"]
        assert (await shown(api, campaign["id"]))["status"] == campaign["status"]
    # A bad body to a running campaign: the status is what is wrong.
    assert_error(await put(api, running["id"], {"name": "  "}), 409, "CAMPAIGN_STATE")


async def test_a_draft_is_deleted_once(api: Api) -> None:
    await march_leads(api, 1)
    draft = await create(api, draft=True)
    kept = await create(api, draft=True, name="Kept")
    at = f"{CAMPAIGNS}/{draft['id']}"

    response = await api.client.delete(at, headers=api.auth)

    assert response.status_code == 200, response.text
    assert response.json() == {
        "success": True,
        "message": "Campaign deleted",
        "error": "",
        "data": {"id": draft["id"]},
    }
    assert_error(await api.client.get(at, headers=api.auth), 404, "CAMPAIGN_NOT_FOUND")
    assert_error(await api.client.delete(at, headers=api.auth), 404, "CAMPAIGN_NOT_FOUND")
    listed = (await api.client.get(CAMPAIGNS, headers=api.auth)).json()["data"]["items"]
    assert [c["id"] for c in listed] == [kept["id"]]


async def test_another_account_can_neither_change_nor_delete(api: Api) -> None:
    await march_leads(api, 1)
    draft = await create(api, draft=True)
    stranger = await account_auth(api, "acc_stranger")
    at = f"{CAMPAIGNS}/{draft['id']}"

    answers = [
        await put(api, draft["id"], {"name": "Mine now"}, headers=stranger),
        await api.client.delete(at, headers=stranger),
    ]

    for response in answers:
        assert_error(response, 404, "CAMPAIGN_NOT_FOUND")
    assert await shown(api, draft["id"]) == draft
