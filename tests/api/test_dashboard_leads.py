"""The lead pages in process, on memory adapters: the forms, the filters and pages, the
export, and another account's leads refused."""

from __future__ import annotations

import html
import re

import pytest

from leadmail.adapters.http.dashboard import pages
from leadmail.domain.leads import LeadFields
from tests.api.dashboard_support import Staff, post_form
from tests.api.support import EPOCH, minutes

# --- the lead pages ---------------------------------------------------------------------


async def test_a_lead_added_by_the_form_is_the_apis_lead(staff: Staff) -> None:
    response = await post_form(
        staff.client,
        "/app/leads",
        "/app/leads/new",
        {
            "name": "Grace Hopper",
            "email": "grace@example.com",
            "source": "open day",
            "phone": "",
            "note": "",
            "tags": "VIP, autumn",
            "fields": "city: Paris\ncourse: cobol",
        },
    )

    assert response.status_code == 303  # type: ignore[attr-defined]
    [lead] = await staff.api.all_leads()
    assert response.headers["location"] == f"/app/leads/{lead['lead_id']}?added=1"  # type: ignore[attr-defined]
    assert (lead["name"], lead["email"], lead["source"]) == (
        "Grace Hopper",
        "grace@example.com",
        "open day",
    )
    assert lead["tags"] == ["autumn", "vip"]
    assert lead["fields"] == {"city": "Paris", "course": "cobol"}
    shown = await staff.client.get(f"/app/leads/{lead['lead_id']}?added=1")
    assert "Lead added." in shown.text
    assert "grace@example.com" in shown.text


async def test_bad_input_shows_the_apis_message_by_the_field_and_keeps_the_form(
    staff: Staff,
) -> None:
    api_answer = await staff.client.post(
        "/api/v1/leads",
        json={"name": "Grace", "email": "not-an-address"},
        headers=staff.api.auth,
    )
    api_message = api_answer.json()["data"]["errors"][0]["message"]

    response = await post_form(
        staff.client,
        "/app/leads",
        "/app/leads/new",
        {"name": "Grace", "email": "not-an-address", "note": "keep me", "tags": "a, b"},
    )

    assert response.status_code == 422  # type: ignore[attr-defined]
    text = response.text  # type: ignore[attr-defined]
    shown = html.unescape(text)
    assert f'<p class="field-error" id="email-error">`email` {api_message}</p>' in shown
    assert 'aria-invalid="true" aria-describedby="email-error"' in text
    assert 'value="Grace"' in text
    assert ">keep me</textarea>" in text
    assert 'value="a, b"' in text
    assert await staff.api.all_leads() == []  # nothing stored


async def test_a_duplicate_email_is_said_by_the_email_field(staff: Staff) -> None:
    await staff.api.add_lead(email="ada@example.com")

    response = await post_form(
        staff.client, "/app/leads", "/app/leads/new", {"name": "Ada", "email": "ADA@example.com"}
    )

    assert response.status_code == 422  # type: ignore[attr-defined]
    assert "A lead with this email already exists" in response.text  # type: ignore[attr-defined]
    assert len(await staff.api.all_leads()) == 1


async def test_editing_changes_only_what_the_form_changed(staff: Staff) -> None:
    lead = await staff.api.add_lead(fields={"year": 2026, "city": "Paris"}, tags=["a"])
    path = f"/app/leads/{lead['lead_id']}"
    form = (await staff.client.get(path + "/edit")).text
    assert "year: 2026" in form

    response = await post_form(
        staff.client,
        path,
        path + "/edit",
        {
            "name": "Ada King",
            "email": lead["email"],
            "source": "",
            "phone": "",
            "note": "",
            "tags": "a, b",
            "fields": "year: 2026\ncourse: maths",
        },
    )

    assert response.status_code == 303  # type: ignore[attr-defined]
    [stored] = await staff.api.all_leads()
    assert stored["name"] == "Ada King"
    assert stored["tags"] == ["a", "b"]
    # year kept as the number it was; city removed; course added.
    assert stored["fields"] == {"year": 2026, "course": "maths"}


async def test_tags_are_added_and_removed_and_a_lead_deleted(staff: Staff) -> None:
    lead = await staff.api.add_lead(tags=["old"])
    path = f"/app/leads/{lead['lead_id']}"

    tagged = await post_form(staff.client, path + "/tags", path, {"add": "new", "remove": "old"})
    [stored] = await staff.api.all_leads()
    deleted = await post_form(staff.client, path + "/delete", path, {})

    assert tagged.status_code == 303  # type: ignore[attr-defined]
    assert stored["tags"] == ["new"]
    assert deleted.status_code == 303  # type: ignore[attr-defined]
    assert deleted.headers["location"] == "/app/leads?deleted=1"  # type: ignore[attr-defined]
    assert await staff.api.all_leads() == []


async def test_the_table_filters_as_the_api_does_and_counts_what_it_selects(staff: Staff) -> None:
    await staff.api.add_lead(name="Ada", email="ada@example.com", tags=["vip"], source="web")
    await staff.api.add_lead(name="Bob", email="bob@example.com", source="fair")
    await staff.api.add_lead(name="Cy", email="cy@example.com", fields={"city": "Lyon"})

    everyone = await staff.client.get("/app/leads")
    vip = await staff.client.get("/app/leads", params={"tag": "vip"})
    fair = await staff.client.get("/app/leads", params={"source": "fair"})
    search = await staff.client.get("/app/leads", params={"q": "bob"})
    lyon = await staff.client.get("/app/leads", params={"field_key": "city", "field_value": "Lyon"})

    assert "3 leads in all" in everyone.text
    for response, name in [(vip, "Ada"), (fair, "Bob"), (search, "Bob"), (lyon, "Cy")]:
        assert "1 lead match" in response.text
        assert f">{name}</a>" in response.text
    bad = await staff.client.get("/app/leads", params={"tag": "x" * 200})
    assert bad.status_code == 422
    assert "`tag`" in bad.text


async def test_cursor_pages_walk_every_lead_once(staff: Staff) -> None:
    for i in range(55):
        await staff.api.seed(email=f"l{i}@example.com", created_at=EPOCH + minutes(i))
    first = await staff.client.get("/app/leads")
    cursor = re.search(r'rel="next" href="/app/leads\?cursor=([^"]+)"', first.text)
    assert cursor
    second = await staff.client.get("/app/leads", params={"cursor": cursor.group(1)})

    seen = re.findall(r"l(\d+)@example.com", first.text + second.text)
    assert sorted(map(int, seen)) == list(range(55))
    assert 'rel="next"' not in second.text


async def test_the_export_is_the_filtered_csv(staff: Staff) -> None:
    await staff.api.add_lead(name="Ada", email="ada@example.com", tags=["vip"])
    await staff.api.add_lead(name="Bob", email="bob@example.com")

    response = await staff.client.get("/app/leads/export", params={"tag": "vip"})

    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="leads.csv"'
    lines = response.text.strip().splitlines()
    assert lines[0].startswith("email,name")
    assert len(lines) == 2
    assert "ada@example.com" in lines[1]


async def test_another_accounts_lead_is_404_on_every_lead_page(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")
    theirs = await staff.api.services.leads.add(
        other.key.account_id, LeadFields.parse(name="Theirs", email="theirs@example.com")
    )
    path = f"/app/leads/{theirs.lead_id}"

    answers = [
        await staff.client.get(path),
        await staff.client.get(path + "/edit"),
        await post_form(staff.client, path, "/app/leads", {"name": "Mine now", "email": "x@y.z"}),
        await post_form(staff.client, path + "/tags", "/app/leads", {"add": "stolen"}),
        await post_form(staff.client, path + "/delete", "/app/leads", {}),
    ]

    assert [a.status_code for a in answers] == [404] * 5  # type: ignore[attr-defined]
    kept = await staff.api.services.leads.get(other.key.account_id, theirs.lead_id)
    assert (kept.name, kept.tags) == ("Theirs", ())
    listing = await staff.client.get("/app/leads")
    assert "theirs@example.com" not in listing.text


async def test_a_filters_count_stops_at_the_cap_and_the_total_does_not(
    staff: Staff, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "COUNT_UP_TO", 2)
    for name in ("Ada", "Bob", "Cy"):
        await staff.api.add_lead(name=name, email=f"{name.lower()}@example.com", tags=["vip"])

    vip = await staff.client.get("/app/leads", params={"tag": "vip"})
    everyone = await staff.client.get("/app/leads")
    audience = await staff.client.get("/app/campaigns/audience", params={"tag": "vip"})

    assert "more than 2 leads match" in vip.text
    assert "3 leads in all" in everyone.text
    assert audience.json() == {"count": "more than 2", "error": ""}
