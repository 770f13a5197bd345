"""Campaigns over the API (in-process, memory adapters): creation (at once, draft,
scheduled), every refusal with its code and nothing stored, the actions and their 409s,
reading one and the list, and account isolation on every endpoint."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.config import Settings
from tests.api.campaign_support import (
    SHARED,
    assert_campaign,
    campaign_body,
    campaign_of,
    create,
    march_leads,
)
from tests.api.support import Api, account_auth, open_api
from tests.support.envelope import CAMPAIGNS, assert_error, assert_invalid, message_for


async def test_a_campaign_is_created_running_with_its_audience_counted(api: Api) -> None:
    await march_leads(api, 3)
    await api.add_lead(email="other@example.com", tags=["april"])

    data = await create(api, reply_to="Replies <replies@example.com>")

    assert data["id"].startswith("cmp_")
    assert (data["status"], data["template_id"], data["name"]) == (
        "running",
        "welcome",
        "March open day",
    )
    assert data["audience"] == {"tag": ["march"]}  # as the service reads it
    assert data["variables"] == SHARED
    assert (data["from"], data["reply_to"]) == (
        "school@example.com",
        '"Replies" <replies@example.com>',
    )
    assert data["counts"] == {"total": 3, "pending": 3, "sent": 0, "failed": 0, "skipped": 0,
                              "suppressed": 0, "unknown": 0, "cancelled": 0}  # fmt: skip
    assert data["started_at"] >= data["created_at"]  # ISO 8601 in UTC: in time order
    assert (data["finished_at"], data["send_at"], data["failure_reason"]) == (None, None, "")
    assert (data["rate_per_minute"], data["eta_seconds"]) == (0, None)  # nothing sent yet


async def test_a_draft_counts_the_leads_matching_now_then_starts(api: Api) -> None:
    await march_leads(api, 2)
    draft = await create(api, draft=True)
    await api.add_lead(email="late@example.com", tags=["march"])

    shown = campaign_of(await api.client.get(f"{CAMPAIGNS}/{draft['id']}", headers=api.auth))
    started = campaign_of(
        await api.client.post(f"{CAMPAIGNS}/{draft['id']}/start", headers=api.auth)
    )

    assert (draft["status"], draft["counts"]["total"], draft["started_at"]) == ("draft", 2, None)
    assert (shown["status"], shown["counts"]["pending"]) == ("draft", 3)
    assert (started["status"], started["counts"]["total"]) == ("running", 3)
    assert started["started_at"] is not None


async def test_send_at_ahead_is_scheduled_and_a_past_one_runs_at_once(api: Api) -> None:
    await march_leads(api, 1)

    later = await create(api, send_at="2999-03-02T09:30:00+01:00")
    past = await create(api, send_at="2020-01-01T00:00:00Z")

    assert (later["status"], later["send_at"]) == ("scheduled", "2999-03-02T08:30:00.000Z")
    assert later["counts"]["total"] == 1  # frozen at the start, which scheduled it
    assert past["status"] == "running"


@pytest.mark.parametrize(
    ("changes", "status", "code", "field"),
    [
        ({"template_id": "no-such-template"}, 404, "TEMPLATE_NOT_FOUND", None),
        ({"audience": {"tag": "nobody"}}, 422, "AUDIENCE_EMPTY", None),
        ({"variables": {"school_name": "N", "courses_link": "l"}}, 422, "VALIDATION_FAILED",
         "variables.contact_email"),
        ({"audience": {"colour": "red"}}, 422, "VALIDATION_FAILED", "audience.colour"),
        ({"audience": {"tag": ["ok", "not ok!"]}}, 422, "VALIDATION_FAILED", "audience.tag"),
        ({"audience": {"field.age": None}}, 422, "VALIDATION_FAILED", "audience.field.age"),
        ({"audience": {"created_after": "yesterday"}}, 422, "VALIDATION_FAILED",
         "audience.created_after"),
        ({"audience": ["march"]}, 422, "VALIDATION_FAILED", "audience"),
        ({"name": "  "}, 422, "VALIDATION_FAILED", "name"),
        ({"name": None}, 422, "VALIDATION_FAILED", "name"),
        ({"send_at": "soon"}, 422, "VALIDATION_FAILED", "send_at"),
        ({"reply_to": "not an address"}, 422, "VALIDATION_FAILED", "reply_to"),
        ({"from": "nobody"}, 422, "VALIDATION_FAILED", "from"),
        ({"draft": "yes"}, 422, "VALIDATION_FAILED", "draft"),
        ({"draft": 0}, 422, "VALIDATION_FAILED", "draft"),
        ({"variables": {"school_name": 5}}, 422, "VALIDATION_FAILED", "variables[...]"),
        ({"status": "running"}, 422, "VALIDATION_FAILED", "status"),
    ],
)  # fmt: skip
async def test_every_refusal_at_creation_has_its_code_and_stores_nothing(
    api: Api, changes: dict[str, Any], status: int, code: str, field: str | None
) -> None:
    await march_leads(api, 2)  # none of them has a custom field contact_email

    response = await api.client.post(CAMPAIGNS, json=campaign_body(**changes), headers=api.auth)

    if field is None:
        assert_error(response, status, code)
    else:
        assert_invalid(response, field)
    listed = await api.client.get(CAMPAIGNS, headers=api.auth)
    assert listed.json()["data"]["items"] == []


async def test_a_missing_variable_is_named_and_a_lead_that_has_it_will_do(api: Api) -> None:
    await march_leads(api, 1)
    shared = {"school_name": "N", "courses_link": "l"}

    refused = await api.client.post(
        CAMPAIGNS, json=campaign_body(variables=shared), headers=api.auth
    )
    message = message_for(
        assert_invalid(refused, "variables.contact_email"), "variables.contact_email"
    )
    await api.add_lead(email="has@example.com", tags=["march"],
                       fields={"contact_email": "ada@example.com"})  # fmt: skip
    data = await create(api, variables=shared)

    assert "no lead of the audience" in message
    # The lead without it is skipped, and named so.
    assert data["counts"] == {**data["counts"], "total": 2, "pending": 1, "skipped": 1}


async def test_the_sender_is_required_without_a_default_and_held_to_the_policy() -> None:
    policy = Settings(migrate_on_start=False, allowed_sender_domains=("example.com",))
    async with open_api(settings=policy) as api:
        await march_leads(api, 1)
        missing = await api.client.post(
            CAMPAIGNS, json=campaign_body(**{"from": None}), headers=api.auth
        )
        elsewhere = await api.client.post(
            CAMPAIGNS, json=campaign_body(**{"from": "ada@elsewhere.org"}), headers=api.auth
        )
        assert "required" in message_for(assert_invalid(missing, "from"), "from")
        assert_error(elsewhere, 403, "SENDER_NOT_ALLOWED")
        defaulted = Settings(migrate_on_start=False, email_default_from="Team <team@example.com>")
    async with open_api(settings=defaulted) as api:
        await march_leads(api, 1)
        data = await create(api, **{"from": None})
        assert data["from"] == '"Team" <team@example.com>'


async def test_each_action_from_each_status_or_409_naming_it(api: Api) -> None:
    await march_leads(api, 2)
    campaign = await create(api)
    at = f"{CAMPAIGNS}/{campaign['id']}"

    async def act(action: str) -> Any:
        return await api.client.post(f"{at}/{action}", headers=api.auth)

    refused = assert_error(await act("start"), 409, "CAMPAIGN_STATE")
    assert "is running" in refused["error"]
    assert campaign_of(await act("pause"))["status"] == "paused"
    assert "is paused" in assert_error(await act("pause"), 409, "CAMPAIGN_STATE")["error"]
    assert campaign_of(await act("resume"))["status"] == "running"
    assert "is running" in assert_error(await act("resume"), 409, "CAMPAIGN_STATE")["error"]
    cancelled = campaign_of(await act("cancel"))
    assert (cancelled["status"], cancelled["counts"]["cancelled"]) == ("cancelled", 2)
    assert cancelled["counts"]["pending"] == 0
    assert cancelled["finished_at"] is not None
    for action in ("start", "pause", "resume", "cancel"):
        assert "is cancelled" in assert_error(await act(action), 409, "CAMPAIGN_STATE")["error"]


async def test_a_start_checks_again(api: Api) -> None:
    [lead] = await march_leads(api, 1)
    draft = await create(api, draft=True)
    await api.client.delete(f"/api/v1/leads/{lead['lead_id']}", headers=api.auth)

    response = await api.client.post(f"{CAMPAIGNS}/{draft['id']}/start", headers=api.auth)

    assert_error(response, 422, "AUDIENCE_EMPTY")
    shown = campaign_of(await api.client.get(f"{CAMPAIGNS}/{draft['id']}", headers=api.auth))
    assert (shown["status"], shown["counts"]["total"]) == ("draft", 0)


async def test_campaigns_are_listed_newest_first_a_page_at_a_time(api: Api) -> None:
    await march_leads(api, 1)
    made = [(await create(api, name=f"Campaign {i}"))["id"] for i in range(3)]

    first = (await api.client.get(CAMPAIGNS, params={"limit": 2}, headers=api.auth)).json()
    cursor = first["data"]["next_cursor"]
    rest = (await api.client.get(CAMPAIGNS, params={"cursor": cursor}, headers=api.auth)).json()

    items = [*first["data"]["items"], *rest["data"]["items"]]
    assert [c["id"] for c in items] == made[::-1]
    assert rest["data"]["next_cursor"] is None
    for campaign in items:
        assert_campaign(campaign)
    for params in ({"limit": 0}, {"limit": 101}, {"cursor": "nope"}):
        response = await api.client.get(CAMPAIGNS, params=params, headers=api.auth)
        assert_error(response, 422, "VALIDATION_FAILED")


async def test_another_account_never_sees_a_campaign(api: Api) -> None:
    await march_leads(api, 1)
    campaign = await create(api)
    stranger = await account_auth(api, "acc_stranger")
    at = f"{CAMPAIGNS}/{campaign['id']}"

    answers = [
        await api.client.get(at, headers=stranger),
        await api.client.get(f"{at}/recipients", headers=stranger),
        *[await api.client.post(f"{at}/{a}", headers=stranger)
          for a in ("start", "pause", "resume", "cancel")],
        await api.client.get(f"{CAMPAIGNS}/cmp_missing", headers=api.auth),
    ]  # fmt: skip

    for response in answers:
        body = assert_error(response, 404, "CAMPAIGN_NOT_FOUND")
        assert body["message"] == "Campaign not found"
    listed = await api.client.get(CAMPAIGNS, headers=stranger)
    assert listed.json()["data"] == {"items": [], "next_cursor": None}
    assert campaign_of(await api.client.get(at, headers=api.auth))["status"] == "running"
