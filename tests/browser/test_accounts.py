"""Another account's ids, in a real browser: every page that takes an id answers 404 with
its message, and nothing of the other account shows."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from tests.api.campaign_support import SHARED
from tests.browser.conftest import Staff, new_staff, signed_in


@pytest.fixture
def theirs(staff: Staff) -> dict[str, str]:
    """Ids of another account's lead, import, campaign and template."""
    other = new_staff(staff.server)
    with other.api() as api:
        lead = api.post("/api/v1/leads", json={"name": "Theirs", "email": "theirs@example.com"})
        started = api.post(
            "/api/v1/leads/imports",
            content=b"email,name\nimported@example.com,Imported\n",
            headers={"Content-Type": "text/csv"},
        )
        campaign = api.post(
            "/api/v1/campaigns",
            json={"name": "Their secret plan", "template_id": "welcome", "variables": SHARED,
                  "from": "hello@school.example", "draft": True},
        )  # fmt: skip
        template = api.post(
            "/api/v1/email/templates",
            json={"name": "Their template", "subject": "Hi", "html": "<p>their words</p>"},
        )
    return {
        "lead": lead.json()["data"]["lead_id"],
        "import": started.json()["data"]["id"],
        "campaign": campaign.json()["data"]["id"],
        "template": template.json()["data"]["id"],
    }


async def test_another_accounts_ids_are_not_found_on_any_page(
    staff: Staff, page: Page, theirs: dict[str, str]
) -> None:
    await signed_in(page, staff)
    paths = {
        f"/app/leads/{theirs['lead']}": "Lead",
        f"/app/leads/{theirs['lead']}/edit": "Lead",
        f"/app/imports/{theirs['import']}": "Import",
        f"/app/campaigns/{theirs['campaign']}": "Campaign",
        f"/app/templates/{theirs['template']}": "Template",
    }

    for path, kind in paths.items():
        answer = await page.goto(f"{staff.base_url}{path}")
        assert answer is not None
        assert answer.status == 404, path
        await expect(page.get_by_role("alert")).to_contain_text(f"{kind} ")
        await expect(page.get_by_role("alert")).to_contain_text("was not found")

    for path in ("/app/leads", "/app/imports", "/app/campaigns", "/app/templates"):
        await page.goto(f"{staff.base_url}{path}")
        text = await page.locator("main").inner_text()
        assert "Their" not in text, path  # (and so not "Theirs")
