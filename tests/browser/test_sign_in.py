"""Signing in and out in a real browser: the password link, a wrong password, the
throttle, a form without its CSRF token, the keyboard alone."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    PASSWORD,
    Staff,
    invite,
    screenshot,
    signed_in,
)
from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer


def test_a_new_user_sets_a_password_from_the_link_and_signs_in_and_out(
    dashboard: LeadmailServer, page: Page
) -> None:
    account = new_name("school")
    dashboard.create_keys(account)
    email = f"{new_name('new')}@school.example"
    link = invite(dashboard, account, email)

    page.goto(link)
    screenshot(page, "password")
    # (A short one the browser refuses itself: minlength.)
    page.get_by_label("New password").fill(PASSWORD)
    page.get_by_label("The same password again").fill(PASSWORD + "!")
    page.get_by_role("button", name="Set password").click()
    expect(page.locator("#again-error")).to_contain_text("not the same password")
    page.get_by_label("New password").fill(PASSWORD)
    page.get_by_label("The same password again").fill(PASSWORD)
    page.get_by_role("button", name="Set password").click()
    expect(page).to_have_url(re.compile(r"/app/sign-in\?"))
    screenshot(page, "sign-in")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(f"{dashboard.base_url}/app/")
    expect(page.locator(".who")).to_contain_text(email)
    expect(page.locator(".who")).to_contain_text(account)
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/app/sign-in"))
    page.goto(f"{dashboard.base_url}/app/leads")
    expect(page).to_have_url(re.compile(r"/app/sign-in\?next="))
    # The link worked once.
    page.goto(link)
    page.get_by_label("New password").fill(PASSWORD)
    page.get_by_label("The same password again").fill(PASSWORD)
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("alert")).to_contain_text("was used, or is more than 24 h old")


def test_a_wrong_password_then_the_throttle_shows_the_wait(staff: Staff, page: Page) -> None:
    page.goto(f"{staff.base_url}/app/sign-in")
    for _ in range(5):
        page.get_by_label("Email address").fill(staff.email)
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_have_text(
            "The email address or the password is not right"
        )

    page.get_by_label("Password").fill(PASSWORD)  # even the right one, now
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("alert")).to_contain_text(re.compile(r"try again in \d+ s"))
    expect(page).to_have_url(f"{staff.base_url}/app/sign-in")


def test_the_keyboard_alone_signs_in(staff: Staff, page: Page) -> None:
    page.goto(f"{staff.base_url}/app/sign-in")
    expect(page.locator("#email")).to_be_focused()  # autofocus
    page.keyboard.type(staff.email)
    page.keyboard.press("Tab")
    expect(page.locator("#password")).to_be_focused()
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")

    expect(page).to_have_url(f"{staff.base_url}/app/")


def test_a_post_without_the_csrf_token_is_refused(staff: Staff, page: Page) -> None:
    signed_in(page, staff)

    # The session cookie goes with it (as a forged form from another site's page would
    # send it, SameSite aside); the token does not.
    answer = page.request.post(
        f"{staff.base_url}/app/leads", form={"name": "Mallory", "email": "m@example.com"}
    )

    assert answer.status == 403
    assert "security token" in answer.text()
    with staff.api() as api:
        assert api.get("/api/v1/leads").json()["data"]["items"] == []
