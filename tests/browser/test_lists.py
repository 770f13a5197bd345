"""The suppression and key pages in a real browser: add and remove a suppression, create a
key (shown once) and revoke it; another account's key refused."""

from __future__ import annotations

import json

from playwright.async_api import Page, expect

from tests.browser.conftest import Staff, new_staff, screenshot, signed_in


async def test_add_and_remove_a_suppression(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)
    await page.get_by_role("link", name="Suppressions").click()

    await page.get_by_label("Email address").fill("no-thanks@example.com")
    await page.get_by_role("button", name="Add", exact=True).click()
    await expect(page.locator(".notice")).to_have_text("Address added.")
    await expect(page.locator("#suppressions")).to_contain_text("no-thanks@example.com")
    await screenshot(page, "suppressions")
    with staff.api() as api:
        [entry] = api.get("/api/v1/suppressions").json()["data"]["items"]
    assert (entry["email"], entry["reason"]) == ("no-thanks@example.com", "manual")

    page.once("dialog", lambda dialog: dialog.accept())  # "Take it off the list?"
    await page.get_by_role("button", name="Remove no-thanks@example.com").click()

    await expect(page.locator(".notice")).to_have_text("Address taken off the list.")
    await expect(page.locator("#suppressions")).not_to_contain_text("no-thanks@example.com")
    with staff.api() as api:
        assert api.get("/api/v1/suppressions").json()["data"]["items"] == []


async def test_create_a_key_see_it_once_and_revoke_it(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)
    await page.get_by_role("link", name="Keys and senders").click()

    await page.get_by_label("What the key is for").fill("enquiry form")
    await page.get_by_role("button", name="Create a key").click()
    secret = await page.locator("#new-key").inner_text()
    await screenshot(page, "keys")
    with staff.server.client(secret) as api:
        assert api.get("/api/v1/leads").status_code == 200
    await page.get_by_role("link", name="Keys and senders").click()
    await expect(page.locator("main")).not_to_contain_text(secret)

    row = page.locator("#keys tr", has_text="enquiry form")
    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name="Revoke").click()

    await expect(page.locator(".notice")).to_contain_text("Key revoked")
    await expect(page.locator("#keys tr", has_text="enquiry form")).to_contain_text("revoked")
    with staff.server.client(secret) as api:
        assert api.get("/api/v1/leads").status_code == 401


async def test_another_accounts_key_is_not_found(staff: Staff, page: Page) -> None:
    other = new_staff(staff.server)
    listing = other.server.cli("keys", "list", "--account", other.account, "--json")
    key_id = json.loads(listing.stdout.splitlines()[0])["key_id"]
    await signed_in(page, staff)
    await page.goto(f"{staff.base_url}/app/keys")
    token = await page.locator("input[name=_csrf_token]").first.get_attribute("value")
    assert token is not None

    answer = await page.request.post(
        f"{staff.base_url}/app/keys/{key_id}/revoke", form={"_csrf_token": token}
    )

    assert answer.status == 404
    with other.api() as api:
        assert api.get("/api/v1/leads").status_code == 200  # still works
