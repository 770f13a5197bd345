"""Templates in a real browser: write one, see it previewed in its sandboxed frame, change
it and see the preview change, send a test to oneself."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.browser.conftest import Staff, screenshot, signed_in


async def test_write_a_template_and_see_the_preview_change(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)
    await page.get_by_role("link", name="Templates").click()
    await screenshot(page, "templates")
    await page.get_by_role("link", name="New template").click()
    await screenshot(page, "template-form")
    await page.get_by_label("Name", exact=True).fill("Open day")
    await page.get_by_label("Subject", exact=False).fill("Come on {{date}}")
    html = page.get_by_label("HTML", exact=True)
    await html.fill("<h1 style='color:#0b5cad'>Hello {{first_name}}</h1>")
    await page.get_by_role("button", name="Create template").click()

    await expect(page.locator(".notice")).to_have_text("Template created.")
    preview = page.frame_locator("#preview")
    await expect(preview.locator("h1")).to_have_text("Hello {{first_name}}")
    await page.get_by_label("Sample values").fill("first_name: Ada")
    await page.get_by_role("button", name="Show").click()
    await expect(preview.locator("h1")).to_have_text("Hello Ada")
    # The frame runs no script: the sandbox attribute, and the preview's own policy.
    assert await page.locator("#preview").get_attribute("sandbox") == ""

    await page.get_by_label("HTML", exact=True).fill("<h1>Welcome, {{first_name}}!</h1>")
    await page.get_by_role("button", name="Save a new version").click()

    await expect(page.locator(".notice")).to_have_text("Saved: a new version.")
    await expect(page.locator("#template-version")).to_have_text("2")
    await expect(preview.locator("h1")).to_have_text("Welcome, {{first_name}}!")
    await expect(page.locator("#versions li")).to_have_count(2)
    await screenshot(page, "template")

    await page.get_by_label("From (empty: the service's default sender)").fill(
        "hello@school.example"
    )
    await page.get_by_role("button", name=f"Send a test to {staff.email}").click()
    await expect(page.locator(".notice")).to_contain_text(f"A test was sent to {staff.email}")
