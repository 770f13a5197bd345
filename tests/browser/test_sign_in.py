"""Signing in and out in a real browser: the password link, a wrong password, the
throttle, a form without its CSRF token, the keyboard alone."""

from __future__ import annotations

import re

from playwright.async_api import Page, expect

from tests.browser.conftest import (
    PASSWORD,
    Staff,
    invite,
    screenshot,
    signed_in,
)
from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer


async def test_a_new_user_sets_a_password_from_the_link_and_signs_in_and_out(
    dashboard: LeadmailServer, page: Page
) -> None:
    account = new_name("school")
    dashboard.create_keys(account)
    email = f"{new_name('new')}@school.example"
    link = invite(dashboard, account, email)

    await page.goto(link)
    await screenshot(page, "password")
    # (A short one the browser refuses itself: minlength.)
    await page.get_by_label("New password").fill(PASSWORD)
    await page.get_by_label("The same password again").fill(PASSWORD + "!")
    await page.get_by_role("button", name="Set password").click()
    await expect(page.locator("#again-error")).to_contain_text("not the same password")
    await page.get_by_label("New password").fill(PASSWORD)
    await page.get_by_label("The same password again").fill(PASSWORD)
    await page.get_by_role("button", name="Set password").click()
    await expect(page).to_have_url(re.compile(r"/app/sign-in\?"))
    await expect(page.locator(".notice")).to_have_text("Your password is set: sign in with it.")
    await expect(page.get_by_label("Email address")).to_have_value(email)
    await screenshot(page, "sign-in")
    await page.get_by_label("Email address").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()

    await expect(page).to_have_url(f"{dashboard.base_url}/app/")
    await expect(page.locator(".who")).to_contain_text(email)
    await expect(page.locator(".who")).to_contain_text(account)
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(re.compile(r"/app/sign-in"))
    await expect(page.locator(".notice")).to_have_text("You are signed out.")
    await page.goto(f"{dashboard.base_url}/app/leads")
    await expect(page).to_have_url(re.compile(r"/app/sign-in\?next="))
    # The link worked once.
    await page.goto(link)
    await page.get_by_label("New password").fill(PASSWORD)
    await page.get_by_label("The same password again").fill(PASSWORD)
    await page.get_by_role("button", name="Set password").click()
    await expect(page.get_by_role("alert")).to_contain_text("was used, or is more than 24 h old")


async def test_a_wrong_password_then_the_throttle_shows_the_wait(staff: Staff, page: Page) -> None:
    await page.goto(f"{staff.base_url}/app/sign-in")
    for _ in range(5):
        await page.get_by_label("Email address").fill(staff.email)
        await page.get_by_label("Password").fill("not the password")
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("alert")).to_have_text(
            "The email address or the password is not right"
        )

    await page.get_by_label("Password").fill(PASSWORD)  # even the right one, now
    await page.get_by_role("button", name="Sign in").click()

    await expect(page.get_by_role("alert")).to_contain_text(re.compile(r"try again in \d+ s"))
    await expect(page).to_have_url(f"{staff.base_url}/app/sign-in")


async def test_the_keyboard_alone_signs_in(staff: Staff, page: Page) -> None:
    await page.goto(f"{staff.base_url}/app/sign-in")
    await expect(page.locator("#email")).to_be_focused()  # autofocus
    await page.keyboard.type(staff.email)
    await page.keyboard.press("Tab")
    await expect(page.locator("#password")).to_be_focused()
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press("Enter")

    await expect(page).to_have_url(f"{staff.base_url}/app/")


async def test_a_post_without_the_csrf_token_is_refused(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)

    # The session cookie goes with it (as a forged form from another site's page would
    # send it, SameSite aside); the token does not.
    answer = await page.request.post(
        f"{staff.base_url}/app/leads", form={"name": "Mallory", "email": "m@example.com"}
    )

    assert answer.status == 403
    assert "security token" in await answer.text()
    with staff.api() as api:
        assert api.get("/api/v1/leads").json()["data"]["items"] == []


async def test_the_keyboard_alone_reaches_every_section(staff: Staff, page: Page) -> None:
    await signed_in(page, staff)

    await page.keyboard.press("Tab")
    await expect(page.locator(".skip")).to_be_focused()  # first: past the navigation
    sections = ["Overview", "Leads", "Import", "Campaigns", "Templates", "Suppressions",
                "Keys and senders"]  # fmt: skip
    for name in sections:
        await page.keyboard.press("Tab")
        link = page.get_by_role("navigation").get_by_role("link", name=name, exact=True)
        await expect(link).to_be_focused()
        # Where the focus is can be seen.
        outline = await link.evaluate("e => getComputedStyle(e).outlineStyle")
        assert outline != "none", name
    await page.keyboard.press("Enter")  # on the last one

    await expect(page).to_have_url(f"{staff.base_url}/app/keys")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Keys and senders")
