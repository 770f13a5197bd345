"""The lead pages in a real browser: add, edit, tag, filter, delete; a bad address shown
by its field; another account's lead refused."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import Staff, new_staff, screenshot, signed_in


def test_add_edit_tag_filter_and_delete_a_lead(staff: Staff, page: Page) -> None:
    signed_in(page, staff)
    screenshot(page, "overview")
    page.get_by_role("link", name="Leads").click()
    page.get_by_role("link", name="Add a lead").click()

    page.get_by_label("Name").fill("Grace Hopper")
    page.get_by_label("Email").fill("grace@localhost")  # the browser lets it by
    page.get_by_label("Tags (separated by commas)").fill("VIP, autumn")
    page.get_by_role("button", name="Add lead").click()
    expect(page.locator("#email-error")).to_contain_text("`email` is not a valid email address")
    expect(page.get_by_label("Name")).to_have_value("Grace Hopper")  # the form kept
    screenshot(page, "lead-form-error")
    page.get_by_label("Email").fill("grace@example.com")
    page.get_by_role("button", name="Add lead").click()

    expect(page.locator(".notice")).to_have_text("Lead added.")
    expect(page.locator("#lead-tags")).to_contain_text("autumn")
    screenshot(page, "lead")
    page.get_by_role("link", name="Edit").click()
    page.get_by_label("Name").fill("Grace B. Hopper")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Grace B. Hopper")
    page.get_by_label("Add (separated by commas)").fill("alumni")
    page.get_by_label("Remove").fill("vip")
    page.get_by_role("button", name="Change tags").click()
    expect(page.locator("#lead-tags")).to_have_text(re.compile(r"alumni\s+autumn"))

    page.get_by_role("link", name="Leads").click()
    page.get_by_label("Tag").fill("alumni")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#lead-count")).to_contain_text("1 lead match")
    expect(page.locator("#leads")).to_contain_text("grace@example.com")
    screenshot(page, "leads")
    with staff.api() as api:
        [lead] = api.get("/api/v1/leads").json()["data"]["items"]
    assert (lead["name"], lead["tags"]) == ("Grace B. Hopper", ["alumni", "autumn"])

    page.get_by_role("link", name="Grace B. Hopper").click()
    page.get_by_role("button", name="Delete this lead").click()
    expect(page.locator(".notice")).to_have_text("Lead deleted.")
    with staff.api() as api:
        assert api.get("/api/v1/leads").json()["data"]["items"] == []


def test_another_accounts_lead_is_not_found(staff: Staff, page: Page) -> None:
    other = new_staff(staff.server)
    with other.api() as api:
        theirs = api.post(
            "/api/v1/leads", json={"name": "Theirs", "email": "theirs@example.com"}
        ).json()["data"]["lead_id"]
    signed_in(page, staff)

    for path in (f"/app/leads/{theirs}", f"/app/leads/{theirs}/edit"):
        answer = page.goto(f"{staff.base_url}{path}")
        assert answer is not None
        assert answer.status == 404
        expect(page.get_by_role("alert")).to_contain_text("was not found")
