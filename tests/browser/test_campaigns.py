"""A campaign in a real browser: made with the form (the audience counted as the filters
change), followed live, paused and resumed while its counts move, then done."""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import Page, expect

from tests.api.campaign_support import SHARED
from tests.browser.conftest import Staff, screenshot, signed_in

LEADS = 24  # at 4 a second: about 6 s of sending


async def sent_now(page: Page) -> int:
    return int((await page.locator("#campaign-sent").inner_text()).replace(",", ""))


async def test_create_pause_resume_and_finish_a_campaign(staff: Staff, page: Page) -> None:
    with staff.api() as api:
        for i in range(LEADS):
            api.post("/api/v1/leads", json={"name": f"L{i}", "email": f"l{i}@example.com",
                                             "tags": ["spring"]}).raise_for_status()  # fmt: skip
        api.post("/api/v1/leads", json={"name": "X", "email": "x@example.com"}).raise_for_status()
    await signed_in(page, staff)
    await page.get_by_role("link", name="Campaigns", exact=True).click()
    await page.get_by_role("link", name="New campaign").click()

    await page.get_by_label("Name", exact=True).fill("Spring open day")
    await page.get_by_label("Template", exact=True).select_option("welcome")
    await expect(page.locator("#audience-count")).to_contain_text(str(LEADS + 1))  # everyone
    await page.get_by_label("Tag").fill("spring")
    await expect(page.locator("#audience-count")).to_contain_text(f"{LEADS}")
    await page.get_by_label("Values for the template's variables").fill(
        "\n".join(f"{k}: {v}" for k, v in SHARED.items())
    )
    await page.get_by_label("From (empty: the service's default sender)").fill(
        "hello@school.example"
    )
    await screenshot(page, "campaign-form")
    await page.get_by_role("button", name="Create campaign").click()

    await expect(page.locator(".notice")).to_have_text("Campaign created.")
    await expect(page.locator("#campaign-total")).to_have_text(str(LEADS))
    # The counts move by themselves (the page asks every 2 s).
    await expect(page.locator("#campaign-sent")).not_to_have_text("0", timeout=10_000)
    await page.get_by_role("button", name="Pause").click()
    await expect(page.locator("#campaign-status")).to_have_text("paused")
    held = await sent_now(page)
    assert 0 < held < LEADS
    await asyncio.sleep(2.5)  # a paused campaign sends no more (a batch in flight may land)
    await page.reload()
    after_pause = await sent_now(page)
    assert after_pause - held <= 4, (held, after_pause)
    await screenshot(page, "campaign")
    await page.get_by_role("button", name="Resume").click()
    await expect(page.locator("#campaign-status")).to_have_text(re.compile("running|done"))
    await expect(page.locator("#campaign-status")).to_have_text("done", timeout=30_000)
    await expect(page.locator("#campaign-sent")).to_have_text(str(LEADS))
    await page.get_by_role("link", name="Campaigns", exact=True).click()
    await expect(page.locator("#campaigns")).to_contain_text("Spring open day")
    await screenshot(page, "campaigns")

    with staff.api() as api:
        [campaign] = api.get("/api/v1/campaigns").json()["data"]["items"]
    assert campaign["counts"]["sent"] == LEADS
    assert campaign["status"] == "done"

    # The overview counts what happened today.
    await page.get_by_role("link", name="Overview").click()
    await expect(page.locator("#leads-total")).to_have_text(str(LEADS + 1))
    await expect(page.locator("#messages-sent")).to_have_text(str(LEADS))
    # What the pause handed back unsent is no failure.
    await expect(page.locator("#messages-failed")).to_have_text("0")
    assert await page.locator("svg.chart rect.bar.sent").count() == 1  # today's bar
    await screenshot(page, "overview")
