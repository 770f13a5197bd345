"""The import pages in process, on memory adapters: a CSV uploaded by the form is the
API's import, its progress read as the page's script reads it, its failed rows shown;
nobody without a session has an upload read; another account's import refused."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tests.api.dashboard_support import Staff, csrf_of
from tests.api.support import open_api

CSV = (
    "email,name,city\nada@example.com,Ada,Paris\nnot-an-address,Bob,Lyon\n"
    "grace@example.com,Grace,\n"
)


async def upload(staff: Staff, text: str, **fields: str) -> Any:
    token = await csrf_of(staff.client, "/app/imports")
    return await staff.client.post(
        "/app/imports",
        data={"_csrf_token": token, "mode": "upsert", "tags": "", **fields},
        files={"file": ("leads.csv", text.encode(), "text/csv")},
        follow_redirects=False,
    )


async def finished(staff: Staff, path: str) -> dict[str, Any]:
    for _ in range(500):
        progress = await staff.client.get(f"{path}/progress")
        assert progress.status_code == 200, progress.text
        shown: dict[str, Any] = progress.json()
        if shown["done"]:
            return shown
        await asyncio.sleep(0.01)
    raise AssertionError(f"the import at {path} did not finish")


async def test_an_uploaded_file_is_imported_and_its_failed_rows_shown(staff: Staff) -> None:
    response = await upload(staff, CSV, tags="open-day")

    assert response.status_code == 303
    path = response.headers["location"]
    assert re.fullmatch(r"/app/imports/imp_[A-Za-z0-9_-]+", path)
    shown = await finished(staff, path)
    assert (shown["status"], shown["rows"], shown["created"], shown["failed"]) == (
        "done",
        "3",
        "2",
        "1",
    )
    leads = {lead["email"]: lead for lead in await staff.api.all_leads()}
    assert set(leads) == {"ada@example.com", "grace@example.com"}
    assert leads["ada@example.com"]["tags"] == ["open-day"]
    assert leads["ada@example.com"]["fields"] == {"city": "Paris"}
    page = await staff.client.get(path)
    assert 'id="import-errors"' in page.text
    assert "<td>3</td>" in page.text  # the row, as a spreadsheet numbers it
    assert "not-an-address" in page.text
    assert "data-live" not in page.text  # nothing more to follow
    listing = await staff.client.get("/app/imports")
    assert path in listing.text


async def test_a_page_being_imported_follows_its_progress(staff: Staff) -> None:
    rows = "".join(f"l{i}@example.com,L{i}\n" for i in range(3_000))

    response = await upload(staff, "email,name\n" + rows)
    page = await staff.client.get(response.headers["location"])

    assert f'data-live="{response.headers["location"]}/progress"' in page.text or (
        "data-live" not in page.text and "done" in page.text
    )
    shown = await finished(staff, response.headers["location"])
    assert shown["rows"] == "3,000"
    assert shown["total"] == "3,000"


async def test_bad_options_and_a_missing_file_are_said_by_their_fields(staff: Staff) -> None:
    token = await csrf_of(staff.client, "/app/imports")
    no_file = await staff.client.post(
        "/app/imports", data={"_csrf_token": token, "mode": "upsert"}, files={"x": ("", b"")}
    )
    bad_mode = await upload(staff, CSV, mode="merge")
    bad_tags = await upload(staff, CSV, tags="a b c, " + "x" * 100)
    no_email = await upload(staff, "name,city\nAda,Paris\n")

    assert no_file.status_code == 422
    assert "`file` is required" in no_file.text
    assert bad_mode.status_code == 422
    assert "`mode` must be `upsert` or `create`" in bad_mode.text
    assert bad_tags.status_code == 422
    assert "`tags" in bad_tags.text
    assert no_email.status_code == 422
    assert "`email` is missing from the header row" in no_email.text
    assert await staff.api.all_leads() == []


async def test_without_a_session_an_upload_is_never_read() -> None:
    async with open_api() as api:
        response = await api.client.post(
            "/app/imports",
            files={"file": ("leads.csv", CSV.encode(), "text/csv")},
            follow_redirects=False,
        )

        assert response.status_code == 303
        assert response.headers["location"].startswith("/app/sign-in")
        assert await api.all_leads() == []


async def test_another_accounts_import_is_404(staff: Staff) -> None:
    other = await staff.api.services.keys.create("other-school")
    theirs = await staff.api.client.post(
        "/api/v1/leads/imports",
        content=CSV.encode(),
        headers={"Authorization": f"Bearer {other.secret}", "Content-Type": "text/csv"},
    )
    import_id = theirs.json()["data"]["id"]

    page = await staff.client.get(f"/app/imports/{import_id}")
    progress = await staff.client.get(f"/app/imports/{import_id}/progress")

    assert page.status_code == 404
    assert progress.status_code == 404
    assert import_id not in (await staff.client.get("/app/imports")).text
