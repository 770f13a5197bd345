"""The template pages in process, on memory adapters: a template made and changed by the
form (each change a version), its preview rendered as a send renders it and framed only by
the dashboard, a test sent to oneself, a predefined one read only, another account's
refused."""

from __future__ import annotations

import html
from typing import Any

from tests.api.dashboard_support import Staff, post_form
from tests.api.support import recorder


def form(**changes: str) -> dict[str, str]:
    return {
        "kind": "template",
        "name": "Open day",
        "subject": "Come on {{date}}, {{first_name}}",
        "html": "<p style='color: #123456'>Hello {{first_name}}, see you on {{date}}.</p>",
        "text": "",
        "layout_id": "",
        **changes,
    }


async def made(staff: Staff, **changes: str) -> str:
    response: Any = await post_form(
        staff.client, "/app/templates", "/app/templates/new", form(**changes)
    )
    assert response.status_code == 303, response.text
    path: str = response.headers["location"].split("?")[0]
    return path


async def test_a_template_made_and_changed_by_the_form_is_the_apis(staff: Staff) -> None:
    path = await made(staff)
    template_id = path.rsplit("/", 1)[1]

    changed: Any = await post_form(
        staff.client, path, path, {**form(), "html": "<p>Changed, {{first_name}}.</p>"}
    )

    assert changed.headers["location"] == f"{path}?said=updated"
    api = await staff.client.get(f"/api/v1/email/templates/{template_id}", headers=staff.api.auth)
    data = api.json()["data"]
    assert (data["version"], data["body"]) == (2, "<p>Changed, {{first_name}}.</p>")
    page = await staff.client.get(path)
    assert 'id="template-version">2<' in page.text
    assert page.text.count("version 1:") == page.text.count("version 2:") == 1


async def test_the_preview_renders_as_a_send_and_is_framed_by_the_dashboard_only(
    staff: Staff,
) -> None:
    path = await made(staff)
    lead = await staff.api.add_lead(name="Ada Lovelace", email="ada@example.com")
    page = await staff.client.get(path, params={"values": "date: Monday"})

    sample = await staff.client.get(f"{path}/preview", params={"values": "date: Monday"})
    of_lead = await staff.client.get(
        f"{path}/preview", params={"values": "date: Monday", "lead_id": lead["lead_id"]}
    )
    missing = await staff.client.get(f"{path}/preview")

    assert '<iframe id="preview" class="preview" sandbox' in page.text
    assert 'src="' + path + '/preview?values=date%3A+Monday"' in page.text
    assert "see you on Monday" in sample.text
    assert 'style="color: #123456"' in sample.text or "color: #123456" in sample.text
    assert "Hello Ada" in of_lead.text  # the lead's own first name
    assert "{{date}}" in missing.text  # a value not given shows as its name
    policy = sample.headers["content-security-policy"]
    assert "frame-ancestors 'self'" in policy
    assert "script-src" not in policy  # default-src 'none': no script at all
    assert "sandbox" in policy
    assert sample.headers["x-frame-options"] == "SAMEORIGIN"


async def test_a_test_goes_to_the_signed_in_user(staff: Staff) -> None:
    path = await made(staff)

    response: Any = await post_form(
        staff.client,
        f"{path}/test",
        path,
        {"values": "date: Monday", "lead_id": "", "sender": "school@example.com"},
    )
    unsent: Any = await post_form(staff.client, f"{path}/test", path, {"values": ""})

    assert unsent.status_code == 200  # said on the page: this service has no default sender
    assert "`from` is required" in unsent.text
    assert response.status_code == 200
    assert f"A test was sent to {staff.email}" in response.text
    [sent] = [d.email for d in recorder(staff.api).delivered]
    assert [box.address for box in sent.to] == [staff.email]
    assert "see you on Monday" in sent.html


async def test_bad_input_is_said_by_its_field_as_the_api_says_it(staff: Staff) -> None:
    api_answer = await staff.client.post(
        "/api/v1/email/templates",
        json={"name": "X", "subject": "Hi {{", "html": "<p>x</p>"},
        headers=staff.api.auth,
    )

    response: Any = await post_form(
        staff.client, "/app/templates", "/app/templates/new", form(subject="Hi {{")
    )

    assert response.status_code == 422
    said = api_answer.json()["data"]["errors"][0]["message"]
    assert f'id="subject-error">`subject` {said}' in html.unescape(response.text)
    assert 'value="Open day"' in response.text
    listed = await staff.client.get("/app/templates")
    assert "Open day" not in listed.text


async def test_a_predefined_template_is_read_only(staff: Staff) -> None:
    page = await staff.client.get("/app/templates/welcome")
    changed: Any = await post_form(
        staff.client, "/app/templates/welcome", "/app/templates/welcome", form()
    )

    assert "predefined: read only" in page.text
    assert "Save a new version" not in page.text
    assert changed.status_code == 422
    assert "read" in changed.text.lower()


async def test_another_accounts_template_is_404_on_every_page(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")
    theirs = await staff.client.post(
        "/api/v1/email/templates",
        json={"name": "Theirs", "subject": "Hi", "html": "<p>secret plans</p>"},
        headers={"Authorization": f"Bearer {other.secret}"},
    )
    path = f"/app/templates/{theirs.json()['data']['id']}"

    answers = [
        await staff.client.get(path),
        await staff.client.get(f"{path}/preview"),
        await post_form(staff.client, path, "/app/templates", form()),
        await post_form(staff.client, f"{path}/test", "/app/templates", {}),
    ]

    assert [a.status_code for a in answers] == [404] * 4  # type: ignore[attr-defined]
    assert "secret plans" not in "".join(a.text for a in answers)  # type: ignore[attr-defined]
