"""The lead pages in a real browser: add, edit, tag, filter, delete; a bad address shown
by its field; another account's lead refused."""

from __future__ import annotations

import re

from playwright.async_api import Page, expect

from tests.browser.conftest import Staff, new_staff, screenshot, signed_in


async def test_add_edit_tag_filter_and_delete_a_lead(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)
    await screenshot(page, "overview-empty")
    await page.get_by_role("link", name="Leads").click()
    await page.get_by_role("link", name="Add a lead").click()

    await page.get_by_label("Name").fill("Grace Hopper")
    await page.get_by_label("Email").fill("grace@localhost")  # the browser lets it by
    await page.get_by_label("Tags (separated by commas)").fill("VIP, autumn")
    await page.get_by_role("button", name="Add lead").click()
    await expect(page.locator("#email-error")).to_contain_text(
        "`email` is not a valid email address"
    )
    await expect(page.get_by_label("Name")).to_have_value("Grace Hopper")  # the form kept
    await screenshot(page, "lead-form-error")
    await page.get_by_label("Email").fill("grace@example.com")
    await page.get_by_role("button", name="Add lead").click()

    await expect(page.locator(".notice")).to_have_text("Lead added.")
    await expect(page.locator("#lead-tags")).to_contain_text("autumn")
    await screenshot(page, "lead")
    await page.get_by_role("link", name="Edit").click()
    await screenshot(page, "lead-form")
    await page.get_by_label("Name").fill("Grace B. Hopper")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Grace B. Hopper")
    await page.get_by_label("Add (separated by commas)").fill("alumni")
    await page.get_by_label("Remove").fill("vip")
    await page.get_by_role("button", name="Change tags").click()
    await expect(page.locator("#lead-tags")).to_have_text(re.compile(r"alumni\s+autumn"))

    await page.get_by_role("link", name="Leads").click()
    await page.get_by_label("Tag").fill("alumni")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.locator("#lead-count")).to_contain_text("1 lead match")
    await expect(page.locator("#leads")).to_contain_text("grace@example.com")
    await screenshot(page, "leads")
    with staff.api() as api:
        [lead] = api.get("/api/v1/leads").json()["data"]["items"]
    assert (lead["name"], lead["tags"]) == ("Grace B. Hopper", ["alumni", "autumn"])

    await page.get_by_role("link", name="Grace B. Hopper").click()
    await page.get_by_role("button", name="Delete this lead").click()
    await expect(page.locator(".notice")).to_have_text("Lead deleted.")
    with staff.api() as api:
        assert api.get("/api/v1/leads").json()["data"]["items"] == []


async def test_another_accounts_lead_is_not_found(staff: Staff, page: Page) -> None:
    other = new_staff(staff.server)
    with other.api() as api:
        theirs = api.post(
            "/api/v1/leads", json={"name": "Theirs", "email": "theirs@example.com"}
        ).json()["data"]["lead_id"]
    await signed_in(page, staff)

    for path in (f"/app/leads/{theirs}", f"/app/leads/{theirs}/edit"):
        answer = await page.goto(f"{staff.base_url}{path}")
        assert answer is not None
        assert answer.status == 404
        await expect(page.get_by_role("alert")).to_contain_text("was not found")
