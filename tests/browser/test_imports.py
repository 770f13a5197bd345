"""Importing a CSV file in a real browser: upload it, watch the progress bar move to the
end by itself, read the rows it did not take."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from tests.browser.conftest import Staff, screenshot, signed_in

ROWS = 20_000  # enough to be seen running on either database


async def test_upload_a_file_and_watch_it_finish(staff: Staff, page: Page, tmp_path: Path) -> None:
    lines = [f"lead{i}@example.com,Lead {i},fair" for i in range(ROWS)]
    lines.insert(5, "not-an-address,Nobody,fair")
    csv = tmp_path / "leads.csv"
    csv.write_text("email,name,source\n" + "\n".join(lines) + "\n")
    await signed_in(page, staff)
    await page.get_by_role("link", name="Import").click()
    await screenshot(page, "imports")

    await page.get_by_label("CSV file", exact=True).set_input_files(csv)
    await page.get_by_label("Tags added to every imported lead (separated by commas)").fill(
        "spring-fair"
    )
    await page.get_by_role("button", name="Import").click()

    await expect(page.get_by_role("heading", level=1)).to_contain_text("Import of")
    # The page follows the import by itself, then shows the rows it did not take.
    await expect(page.locator("#import-status")).to_have_text("done", timeout=60_000)
    await expect(page.locator("#import-errors")).to_contain_text("not-an-address", timeout=10_000)
    await expect(page.locator("#import-created")).to_have_text(f"{ROWS:,}")
    await expect(page.locator("#import-failed")).to_have_text("1")
    assert await page.locator("#import-bar").get_attribute("value") == str(ROWS + 1)
    await screenshot(page, "import")
    with staff.api() as api:
        counted = api.get("/api/v1/leads/count", params={"tag": "spring-fair"}).json()
    assert counted["data"]["count"] == ROWS
