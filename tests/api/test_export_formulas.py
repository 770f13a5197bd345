"""The CSV export neutralises cells a spreadsheet would run as formulas (OWASP's CSV
injection advice: a ``'`` first), and a plain re-import of the export gives the leads
back exactly, the ``'`` taken off again (issue 24)."""

from __future__ import annotations

import asyncio
import csv
import io
from typing import Any

from tests.api.support import Api, account_auth
from tests.support.envelope import EXPORT, IMPORTS

FORMULAS = {
    '=HYPERLINK("https://evil.example","x")': '\'=HYPERLINK("https://evil.example","x")',
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "-2+3": "'-2+3",
    "@SUM(A1:A2)": "'@SUM(A1:A2)",
    "  =1+2": "'  =1+2",  # a formula after leading spaces
    "'=1+2": "''=1+2",  # one more ', so the import's one off gives it back
    "'quoted'": "'quoted'",  # no formula: as it is
}


async def test_formula_cells_are_exported_with_a_quote_and_import_back_as_they_were(
    api: Api,
) -> None:
    for number, note in enumerate(FORMULAS):
        await api.add_lead(
            email=f"lead{number}@example.com",
            name=f"Lead {number}",
            note=note,
            source="=1+1",
            phone="+44 20 7946 0958",
            fields={"city": "@Leeds", "age": -3},
        )

    exported = (await api.client.get(EXPORT, headers=api.auth)).text
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert {row["note"]: row for row in rows}.keys() == set(FORMULAS.values())
    for row in rows:
        assert row["source"] == "'=1+1"
        assert row["phone"] == "'+44 20 7946 0958"
        assert row["city"] == "'@Leeds"
        assert row["age"] == "'-3"
        assert row["email"].startswith("lead")  # nothing else touched

    other = await account_auth(api, "globex")
    response = await api.client.post(
        IMPORTS, content=exported.encode(), headers={**other, "Content-Type": "text/csv"}
    )
    assert response.status_code == 202, response.text
    imported = await imported_leads(api, other, response.json()["data"]["id"])
    assert sorted(lead["note"] for lead in imported) == sorted(FORMULAS)
    for lead in imported:
        assert lead["source"] == "=1+1"
        assert lead["phone"] == "+44 20 7946 0958"
        assert lead["fields"] == {"city": "@Leeds", "age": "-3"}  # CSV has no types


async def imported_leads(api: Api, auth: dict[str, str], import_id: str) -> list[Any]:
    for _ in range(1_000):
        found = (await api.client.get(f"{IMPORTS}/{import_id}", headers=auth)).json()["data"]
        if found["status"] in ("done", "failed"):
            break
        await asyncio.sleep(0.01)
    assert found["status"] == "done", found
    assert found["failed"] == 0, found
    return await api.all_leads(auth)
