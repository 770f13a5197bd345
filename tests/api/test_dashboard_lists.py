"""The suppression and key pages in process, on memory adapters: what they list, their
forms, the key shown once, and another account's entries refused."""

from __future__ import annotations

import re

from tests.api.dashboard_support import Staff, post_form
from tests.support.envelope import bearer

SUPPRESSIONS = "/app/suppressions"


async def test_an_address_is_added_listed_and_taken_off(staff: Staff) -> None:
    added = await post_form(staff.client, SUPPRESSIONS, SUPPRESSIONS, {"email": "Gone@Example.com"})
    again = await post_form(staff.client, SUPPRESSIONS, SUPPRESSIONS, {"email": "gone@example.com"})
    listed = await staff.client.get(SUPPRESSIONS)
    api = await staff.client.get("/api/v1/suppressions", headers=staff.api.auth)

    assert added.headers["location"] == f"{SUPPRESSIONS}?said=added"  # type: ignore[attr-defined]
    assert again.headers["location"] == f"{SUPPRESSIONS}?said=known"  # type: ignore[attr-defined]
    assert "<td>gone@example.com</td>" in listed.text
    assert "<td>manual</td>" in listed.text
    [entry] = api.json()["data"]["items"]
    assert entry["email"] == "gone@example.com"

    removed = await post_form(
        staff.client, f"{SUPPRESSIONS}/remove", SUPPRESSIONS, {"email": "gone@example.com"}
    )
    missing = await post_form(
        staff.client, f"{SUPPRESSIONS}/remove", SUPPRESSIONS, {"email": "gone@example.com"}
    )

    assert removed.headers["location"] == f"{SUPPRESSIONS}?said=removed"  # type: ignore[attr-defined]
    assert missing.status_code == 404  # type: ignore[attr-defined]
    api = await staff.client.get("/api/v1/suppressions", headers=staff.api.auth)
    assert api.json()["data"]["items"] == []


async def test_a_bad_address_is_said_by_its_field_as_the_api_says_it(staff: Staff) -> None:
    api_answer = await staff.client.post(
        "/api/v1/suppressions", json={"email": "nobody"}, headers=staff.api.auth
    )

    response = await post_form(staff.client, SUPPRESSIONS, SUPPRESSIONS, {"email": "nobody"})

    assert response.status_code == 422  # type: ignore[attr-defined]
    said = api_answer.json()["data"]["errors"][0]["message"]
    assert said.replace("'", "&#39;") in response.text  # type: ignore[attr-defined]
    assert 'value="nobody"' in response.text  # type: ignore[attr-defined]


async def test_the_list_is_filtered_by_reason_and_another_accounts_is_not_shown(
    staff: Staff,
) -> None:
    other = await staff.api.services.keys.create("other-school")
    await staff.api.services.suppressions.add(other.key.account_id, "theirs@example.com")
    await staff.api.services.suppressions.add(staff.api.account_id, "mine@example.com")

    mine = await staff.client.get(SUPPRESSIONS)
    bounced = await staff.client.get(SUPPRESSIONS, params={"reason": "bounced"})
    bad = await staff.client.get(SUPPRESSIONS, params={"reason": "angry"})
    theirs = await post_form(
        staff.client, f"{SUPPRESSIONS}/remove", SUPPRESSIONS, {"email": "theirs@example.com"}
    )

    assert "mine@example.com" in mine.text
    assert "theirs@example.com" not in mine.text
    assert "mine@example.com" not in bounced.text
    assert bad.status_code == 422
    assert "`reason` must be one of" in bad.text
    assert theirs.status_code == 404  # type: ignore[attr-defined]
    kept = await staff.api.services.suppressions.list(other.key.account_id, 10)
    assert [e.email for e in kept.items] == ["theirs@example.com"]


async def test_a_key_is_made_shown_once_and_works_then_revoked(staff: Staff) -> None:
    made = await post_form(staff.client, "/app/keys", "/app/keys", {"label": "website form"})

    assert made.status_code == 200  # type: ignore[attr-defined]
    secret = re.search(r'<code id="new-key">(lm_[^<]+)</code>', made.text)  # type: ignore[attr-defined]
    assert secret
    works = await staff.client.get("/api/v1/leads", headers=bearer(secret.group(1)))
    assert works.status_code == 200
    listing = await staff.client.get("/app/keys")
    assert secret.group(1) not in listing.text  # never again
    assert "website form" in listing.text
    [key_id] = [
        k.key_id for k in await staff.api.services.keys.list("acme") if k.label == "website form"
    ]

    revoked = await post_form(staff.client, f"/app/keys/{key_id}/revoke", "/app/keys", {})

    assert revoked.headers["location"] == "/app/keys?said=revoked"  # type: ignore[attr-defined]
    refused = await staff.client.get("/api/v1/leads", headers=bearer(secret.group(1)))
    assert refused.status_code == 401


async def test_another_accounts_key_cannot_be_revoked(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")

    answer = await post_form(staff.client, f"/app/keys/{other.key.key_id}/revoke", "/app/keys", {})

    assert answer.status_code == 404  # type: ignore[attr-defined]
    [kept] = await staff.api.services.keys.list("other-school")
    assert kept.active
    assert other.key.key_id not in (await staff.client.get("/app/keys")).text


async def test_the_sender_domains_are_listed(staff: Staff) -> None:
    none = await staff.client.get("/app/keys")
    await staff.api.services.sender_domains.add(staff.api.account_id, "school.example")
    some = await staff.client.get("/app/keys")

    assert "No sender domains of its own" in none.text
    assert "<li>school.example" in some.text


async def test_the_overview_counts_the_last_30_days_and_shows_campaigns_under_way(
    staff: Staff,
) -> None:
    for i in range(3):
        await staff.api.add_lead(email=f"l{i}@example.com", tags=["march"])
    await staff.api.services.suppressions.add(staff.api.account_id, "gone@example.com")
    other = await staff.api.services.keys.create("other-school")
    await staff.api.add_lead(email="theirs@example.com", headers=bearer(other.secret))

    page = await staff.client.get("/app/")

    assert page.status_code == 200
    assert 'id="leads-total">3<' in page.text  # not the other account's
    assert 'id="leads-period">3<' in page.text
    assert page.text.count('<rect class="bar"') == 1  # one day with leads
    assert "<strong>1</strong> manual" in page.text
    assert "None running now." in page.text
