"""CSV import and export over the API (in-process, memory adapters): 202 then progress to
done, error rows by page, 413, header 422s naming the column, tenant isolation, the
export's content and filter, and a file exported and imported into another account."""

from __future__ import annotations

from typing import Any

from leadmail.config import Settings
from tests.api.support import Api, open_api
from tests.support.envelope import EXPORT, IMPORTS, LEADS, assert_error

FILE = (
    "\ufeffEmail;Name;Tags;City;Course of interest\r\n"
    'ada@example.com;Ada Lovelace;vip|evening;Leeds;"Data; science"\r\n'
    "not-an-email;Nobody;;;\r\n"
    'grace@example.com;"Grace\r\nHopper";;York;\r\n'
    "ADA@example.com;Ada L;;;\r\n"
)


async def test_an_import_is_queued_then_runs_to_done_with_its_counts(api: Api) -> None:
    response = await api.client.post(
        IMPORTS,
        content=FILE.encode(),
        params={"tags": "imported, spring"},
        headers={**api.auth, "Content-Type": "text/csv"},
    )

    assert response.status_code == 202, response.text
    queued = response.json()["data"]
    assert (queued["status"], queued["rows"], queued["mode"]) == ("queued", 0, "upsert")
    assert queued["tags"] == ["imported", "spring"]
    done = await api.finished_import(queued["id"])
    assert done["status"] == "done"
    assert (done["rows"], done["total"], done["eta_seconds"]) == (4, 4, None)
    assert (done["created"], done["updated"], done["skipped"], done["failed"]) == (1, 0, 1, 2)
    [lead] = await api.all_leads()
    assert (lead["email"], lead["name"]) == ("ADA@example.com", "Ada L")
    assert lead["tags"] == ["imported", "spring"]
    assert lead["fields"] == {}  # blank cells are no value


async def test_error_rows_are_listed_a_page_at_a_time(api: Api) -> None:
    done = await api.import_csv(FILE)
    url = f"{IMPORTS}/{done['id']}/errors"

    first = (await api.client.get(url, params={"limit": 2}, headers=api.auth)).json()["data"]
    rest = await api.client.get(url, params={"cursor": first["next_cursor"]}, headers=api.auth)

    rows = [*first["items"], *rest.json()["data"]["items"]]
    assert [(r["row"], r["field"], r["email"]) for r in rows] == [
        (2, "email", "ada@example.com"),
        (3, "email", "not-an-email"),
        (4, "name", "grace@example.com"),
    ]
    assert "row 5 has the same email" in rows[0]["message"]
    assert rest.json()["data"]["next_cursor"] is None
    assert_error(
        await api.client.get(url, params={"cursor": "x"}, headers=api.auth),
        422,
        "VALIDATION_FAILED",
    )


async def test_mode_create_reports_existing_emails_and_changes_nothing(api: Api) -> None:
    await api.add_lead(name="Kept", email="ada@example.com")

    done = await api.import_csv("email,name\nada@example.com,New\n", {"mode": "create"})

    assert (done["created"], done["skipped"]) == (0, 1)
    assert [lead["name"] for lead in await api.all_leads()] == ["Kept"]


async def test_a_multipart_file_part_is_imported(api: Api) -> None:
    response = await api.client.post(
        IMPORTS,
        files={"file": ("leads.csv", b"email,name\nada@example.com,Ada\n", "text/csv")},
        data={"note": "ignored"},
        headers=api.auth,
    )

    assert response.status_code == 202, response.text
    assert (await api.finished_import(response.json()["data"]["id"]))["created"] == 1
    no_file = await api.client.post(
        IMPORTS, files={"other": ("x.csv", b"email\n", "text/csv")}, headers=api.auth
    )
    assert assert_error(no_file, 422, "VALIDATION_FAILED")["data"]["errors"][0]["field"] == ("file")


async def test_a_header_that_cannot_be_read_is_refused_naming_the_column(api: Api) -> None:
    response = await api.client.post(
        IMPORTS,
        content=b"email,Favourite Colour!,name\nada@example.com,red,Ada\n",
        headers={**api.auth, "Content-Type": "text/csv"},
    )
    no_email = await api.client.post(
        IMPORTS, content=b"name\nAda\n", headers={**api.auth, "Content-Type": "text/csv"}
    )
    empty = await api.client.post(
        IMPORTS, content=b"", headers={**api.auth, "Content-Type": "text/csv"}
    )

    errors = assert_error(response, 422, "VALIDATION_FAILED")["data"]["errors"]
    assert [e["field"] for e in errors] == ["Favourite Colour!"]
    assert assert_error(no_email, 422, "VALIDATION_FAILED")["data"]["errors"][0]["field"] == (
        "email"
    )
    assert_error(empty, 422, "VALIDATION_FAILED")
    assert await api.adapters.imports.unfinished() == []  # nothing stored


async def test_a_header_refused_says_so_in_one_sentence(api: Api) -> None:
    no_email = await api.client.post(
        IMPORTS, content=b"name\nAda\n", headers={**api.auth, "Content-Type": "text/csv"}
    )
    no_file = await api.client.post(
        IMPORTS, files={"other": ("x.csv", b"email\n", "text/csv")}, headers=api.auth
    )

    assert assert_error(no_email, 422, "VALIDATION_FAILED")["error"] == (
        "Invalid request: `email` is missing from the header row: every file needs this column"
    )
    assert assert_error(no_file, 422, "VALIDATION_FAILED")["error"] == (
        "Invalid request: `file` is missing from the multipart body"
    )


async def test_a_file_over_the_limit_is_413() -> None:
    settings = Settings(migrate_on_start=False, import_max_bytes=1_000)
    async with open_api(settings=settings) as api:
        big = b"email\n" + b"lead@example.com\n" * 100
        # (A chunked body, counted as it streams, is sent by tests/e2e: the test client
        # sends a Content-Length.)
        announced = await api.client.post(
            IMPORTS, content=big, headers={**api.auth, "Content-Type": "text/csv"}
        )

        assert_error(announced, 413, "PAYLOAD_TOO_LARGE")
        assert await api.adapters.imports.unfinished() == []
        small = await api.import_csv(b"email\nlead@example.com\n")
        assert small["created"] == 1


async def test_another_accounts_import_is_not_found(api: Api) -> None:
    done = await api.import_csv("email\nada@example.com\n")
    other = await api.services.keys.create("other-school")
    headers = {"Authorization": f"Bearer {other.secret}"}

    for url in (f"{IMPORTS}/{done['id']}", f"{IMPORTS}/{done['id']}/errors"):
        assert_error(await api.client.get(url, headers=headers), 404, "IMPORT_NOT_FOUND")
    assert_error(
        await api.client.get(f"{IMPORTS}/imp_nope", headers=api.auth), 404, "IMPORT_NOT_FOUND"
    )


async def test_the_export_is_csv_of_the_segment_with_its_custom_keys(api: Api) -> None:
    await api.add_lead(
        name="Ada", email="ada@example.com", tags=["vip"], fields={"city": "Leeds", "age": 34}
    )
    await api.add_lead(name="Grace", email="grace@example.com", fields={"zone": "b"})

    everyone = await api.client.get(EXPORT, headers=api.auth)
    vip = await api.client.get(EXPORT, params={"tag": "vip"}, headers=api.auth)

    assert everyone.status_code == 200
    assert everyone.headers["content-type"].startswith("text/csv")
    lines = everyone.text.split("\r\n")
    assert lines[0] == "email,name,source,note,phone,tags,age,city,zone"
    assert sorted(lines[1:3]) == [
        "ada@example.com,Ada,,,,vip,34,Leeds,",
        "grace@example.com,Grace,,,,,,,b",
    ]
    assert vip.text == "email,name,source,note,phone,tags,age,city\r\n" + (
        "ada@example.com,Ada,,,,vip,34,Leeds\r\n"
    )
    assert_error(
        await api.client.get(EXPORT, params={"colour": "red"}, headers=api.auth),
        422,
        "VALIDATION_FAILED",
    )


def comparable(lead: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in lead.items() if k not in ("lead_id", "created_at", "updated_at")}


async def test_a_file_exported_and_imported_into_another_account_gives_the_same_leads(
    api: Api,
) -> None:
    for n in range(120):
        await api.add_lead(
            name=f"Lead, {n}",
            email=f"lead{n}@example.com",
            note=f'line one\nline "two" {n}',
            phone="+44 20 7946 0958" if n % 2 else "",
            tags=["spring", f"t{n % 3}"],
            fields={"city": "Leeds" if n % 2 else "York", "code": f"0{n}"},
        )
    exported = (await api.client.get(EXPORT, headers=api.auth)).text
    other = await api.services.keys.create("another-school")
    headers = {"Authorization": f"Bearer {other.secret}"}

    response = await api.client.post(
        IMPORTS, content=exported.encode(), headers={**headers, "Content-Type": "text/csv"}
    )
    assert response.status_code == 202
    import_id = response.json()["data"]["id"]
    found = await api.client.get(f"{IMPORTS}/{import_id}", headers=headers)
    for _ in range(500):
        if found.json()["data"]["status"] == "done":
            break
        found = await api.client.get(f"{IMPORTS}/{import_id}", headers=headers)

    assert found.json()["data"]["created"] == 120
    mine = sorted(map(comparable, await api.all_leads()), key=lambda lead: lead["email"])
    theirs = sorted(map(comparable, await api.all_leads(headers)), key=lambda x: x["email"])
    assert theirs == mine
    assert await api.client.get(LEADS, headers=headers)


async def test_the_export_names_its_charset_once(api: Api) -> None:
    await api.add_lead(name="Ada", email="ada@example.com")

    exported = await api.client.get(EXPORT, headers=api.auth)

    assert exported.status_code == 200
    assert exported.headers["content-type"] == "text/csv; charset=utf-8"
