"""The campaign pages in process, on memory adapters (the provider held, so a campaign
stays running): one made by the form is the API's campaign, with the audience counted as
the filters change; pause, resume, cancel; bad input by its field; another account's
campaign refused."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.api.campaign_support import SHARED
from tests.api.dashboard_support import Staff, post_form
from tests.api.support import SENDER

VARIABLES = "\n".join(f"{name}: {value}" for name, value in SHARED.items())


def form(**changes: str) -> dict[str, str]:
    return {
        "name": "Spring open day",
        "template_id": "welcome",
        "tag": "march",
        "variables": VARIABLES,
        "sender": SENDER,
        "when": "now",
        **changes,
    }


async def made(staff: Staff, **changes: str) -> str:
    response: Any = await post_form(
        staff.client, "/app/campaigns", "/app/campaigns/new", form(**changes)
    )
    assert response.status_code == 303, response.text
    path: str = response.headers["location"].split("?")[0]
    return path


async def test_a_campaign_made_by_the_form_is_the_apis(staff: Staff) -> None:
    for i in range(3):
        await staff.api.add_lead(email=f"m{i}@example.com", tags=["march"])
    await staff.api.add_lead(email="other@example.com")

    path = await made(staff)

    campaign_id = path.rsplit("/", 1)[1]
    api = await staff.client.get(f"/api/v1/campaigns/{campaign_id}", headers=staff.api.auth)
    data = api.json()["data"]
    assert (data["name"], data["template_id"], data["status"]) == (
        "Spring open day",
        "welcome",
        "running",
    )
    assert data["audience"] == {"tag": ["march"]}
    assert data["variables"] == SHARED
    assert data["counts"]["total"] == 3
    page = await staff.client.get(path + "?said=created")
    assert "Campaign created." in page.text
    assert 'id="campaign-total">3<' in page.text
    assert f'data-live="{path}/progress"' in page.text
    progress = (await staff.client.get(f"{path}/progress")).json()
    assert (progress["status"], progress["total"], progress["done"]) == ("running", "3", False)


async def test_the_audience_is_counted_as_its_filters_change(staff: Staff) -> None:
    await staff.api.add_lead(email="a@example.com", tags=["march"], source="fair")
    await staff.api.add_lead(email="b@example.com", tags=["march"])

    every = await staff.client.get("/app/campaigns/audience")
    march = await staff.client.get("/app/campaigns/audience", params={"tag": "march"})
    fair = await staff.client.get(
        "/app/campaigns/audience", params={"tag": "march", "source": "fair"}
    )
    bad = await staff.client.get("/app/campaigns/audience", params={"tag": "x" * 200})

    assert [r.json()["count"] for r in (every, march, fair)] == ["2", "2", "1"]
    assert bad.json()["count"] == "—"
    assert "`tag`" in bad.json()["error"]


async def test_pause_resume_and_cancel(staff: Staff) -> None:
    await staff.api.add_lead(email="m@example.com", tags=["march"])
    path = await made(staff)

    paused: Any = await post_form(staff.client, f"{path}/pause", path, {})
    after_pause = (await staff.client.get(f"{path}/progress")).json()["status"]
    again: Any = await post_form(staff.client, f"{path}/pause", path, {})
    resumed: Any = await post_form(staff.client, f"{path}/resume", path, {})
    after_resume = (await staff.client.get(f"{path}/progress")).json()["status"]
    cancelled: Any = await post_form(staff.client, f"{path}/cancel", path, {})
    final = (await staff.client.get(f"{path}/progress")).json()

    assert paused.headers["location"] == f"{path}?said=pause"
    assert after_pause == "paused"
    assert again.status_code == 409  # the API's conflict, as a page
    assert resumed.status_code == 303
    assert after_resume == "running"
    assert cancelled.status_code == 303
    assert (final["status"], final["done"]) == ("cancelled", True)
    page = await staff.client.get(path)
    assert "data-live" not in page.text  # nothing more to follow


async def test_a_draft_then_started(staff: Staff) -> None:
    await staff.api.add_lead(email="m@example.com", tags=["march"])
    path = await made(staff, when="draft")
    draft = await staff.client.get(path)

    started: Any = await post_form(staff.client, f"{path}/start", path, {})

    assert ">draft<" in draft.text
    assert started.status_code == 303
    assert (await staff.client.get(f"{path}/progress")).json()["status"] == "running"


async def test_bad_input_is_said_by_its_field_with_the_form_kept(staff: Staff) -> None:
    api_answer = await staff.client.post(
        "/api/v1/campaigns",
        json={"name": "X", "template_id": "no-such-template", "from": SENDER},
        headers=staff.api.auth,
    )
    response: Any = await post_form(
        staff.client, "/app/campaigns", "/app/campaigns/new", form(template_id="no-such-template")
    )
    no_sender: Any = await post_form(
        staff.client, "/app/campaigns", "/app/campaigns/new", form(sender="not an address")
    )

    assert api_answer.status_code == 404
    assert response.status_code == 422
    text = html.unescape(response.text)
    said = api_answer.json()["error"]
    assert f'<p class="field-error" id="template_id-error">{said}</p>' in text
    assert 'value="Spring open day"' in text
    assert no_sender.status_code == 422
    assert 'aria-describedby="sender-error"' in no_sender.text
    listed = await staff.client.get("/api/v1/campaigns", headers=staff.api.auth)
    assert listed.json()["data"]["items"] == []


async def test_another_accounts_campaign_is_404_on_every_page(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")
    await staff.api.add_lead(headers={"Authorization": f"Bearer {other.secret}"})
    response = await staff.client.post(
        "/api/v1/campaigns",
        json={"name": "Theirs", "template_id": "welcome", "variables": SHARED, "from": SENDER,
              "draft": True},
        headers={"Authorization": f"Bearer {other.secret}"},
    )  # fmt: skip
    path = f"/app/campaigns/{response.json()['data']['id']}"

    answers = [
        await staff.client.get(path),
        await staff.client.get(f"{path}/progress"),
        *[await post_form(staff.client, f"{path}/{a}", "/app/campaigns", {}) for a in
          ("start", "pause", "resume", "cancel")],
    ]  # fmt: skip

    assert [a.status_code for a in answers] == [404] * 6  # type: ignore[attr-defined]
    theirs = await staff.client.get(
        f"/api/v1/campaigns/{response.json()['data']['id']}",
        headers={"Authorization": f"Bearer {other.secret}"},
    )
    assert theirs.json()["data"]["status"] == "draft"


async def test_an_audience_of_nobody_is_said_by_the_audience(staff: Staff) -> None:
    response: Any = await post_form(
        staff.client, "/app/campaigns", "/app/campaigns/new", form(tag="nobody-has-this")
    )

    assert response.status_code == 422
    assert 'id="audience-error">The audience matches no lead' in response.text


async def test_a_campaign_scheduled_for_later_and_a_time_that_is_none(staff: Staff) -> None:
    await staff.api.add_lead(email="m@example.com", tags=["march"])
    later = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")

    path = await made(staff, when="later", send_at=later)
    bad: Any = await post_form(
        staff.client, "/app/campaigns", "/app/campaigns/new", form(when="later", send_at="soon")
    )

    assert (await staff.client.get(f"{path}/progress")).json()["status"] == "scheduled"
    assert later[:16].replace("T", " ") in (await staff.client.get(path)).text
    assert bad.status_code == 422
    assert 'id="send_at-error">`send_at`' in bad.text
