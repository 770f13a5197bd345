"""Erasure then export with the real ``leadmail serve`` and ``leadmail worker`` on Postgres,
sending through the provider stand-in: a person who was imported (and named by an import's
error row), mailed by a send and by a campaign and put on the suppression list is shown
whole by the export; after the erasure the export shows nothing, no row of the account's
in any table holds the address, and the address is still never mailed again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from tests.e2e.campaigns import campaign_rig
from tests.e2e.mail import SENDER
from tests.postgres import fresh_database
from tests.support.envelope import (
    IMPORTS,
    PRIVACY_ERASE,
    PRIVACY_EXPORT,
    SEND,
    SUPPRESSIONS,
    assert_error,
    ok_data,
)


@pytest.fixture
async def database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_database(postgres_server) as url:
        yield url


def imported_with_an_error_row(api: httpx.Client, person: str) -> str:
    """An import (mode create) whose only row is ``person``'s again: an error row."""
    answer = api.post(
        IMPORTS,
        params={"mode": "create"},
        content=f"email,name\n{person.upper()},Again\n".encode(),
        headers={"Content-Type": "text/csv"},
    )
    assert answer.status_code == 202, answer.text
    queued = answer.json()["data"]
    deadline = time.monotonic() + 30
    while (done := ok_data(api.get(f"{IMPORTS}/{queued['id']}")))["status"] != "done":
        assert time.monotonic() < deadline, done
        time.sleep(0.1)
    assert done["skipped"] == 1, done
    import_id: str = queued["id"]
    return import_id


async def rows_naming(database_url: str, address: str) -> list[str]:
    """Every row of every table in the public schema whose text holds ``address``."""
    connection = await asyncpg.connect(database_url)
    try:
        tables = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
        found: list[str] = []
        for (table,) in tables:
            rows = await connection.fetch(
                f'SELECT t::text AS row FROM "{table}" AS t WHERE strpos(lower(t::text), $1) > 0',
                address,
            )
            found += [f"{table}: {row['row']}" for row in rows]
        return found
    finally:
        await connection.close()


@pytest.mark.postgres
def test_erasure_then_export_shows_nothing_and_the_address_stays_suppressed(
    database: str, tmp_path: Path
) -> None:
    with campaign_rig(database, tmp_path, "resend", EMAIL_BATCH="2") as rig:
        emails = rig.leads(3)
        person, other = emails[0], emails[1]
        with rig.client() as api, rig.worker():  # imports and campaigns run on a worker
            import_id = imported_with_an_error_row(api, person)
            body = {"to": f"Ada <{person}>", "subject": "Your place", "from": SENDER}
            assert ok_data(api.post(SEND, json={**body, "html": "<p>Hi</p>"}))["status"] == "sent"
            campaign_id = rig.create()
            rig.wait_for(campaign_id, "done")
            added = api.post(SUPPRESSIONS, json={"email": person})
            assert added.status_code == 201, added.text

            shown = ok_data(api.get(PRIVACY_EXPORT, params={"email": person}))
            erased = ok_data(api.post(PRIVACY_ERASE, json={"email": person}))
            after = ok_data(api.get(PRIVACY_EXPORT, params={"email": person}))
            again = ok_data(api.post(PRIVACY_ERASE, json={"email": person}))
            refused = api.post(SEND, json={**body, "html": "<p>Hi again</p>"})
            still = ok_data(api.get(PRIVACY_EXPORT, params={"email": other}))

    assert shown["lead"]["email"] == person
    assert len(shown["messages"]) == 2  # the send and the campaign's
    assert {m["subject"] for m in shown["messages"]} >= {"Your place"}
    [recipient] = shown["campaign_recipients"]
    assert (recipient["campaign_id"], recipient["recipient"]["status"]) == (campaign_id, "sent")
    [row] = shown["import_errors"]
    local, _, domain = person.upper().partition("@")  # a valid cell: its domain lower-cased
    assert (row["import_id"], row["row"]["email"]) == (import_id, f"{local}@{domain.lower()}")
    assert shown["suppression"]["reason"] == "manual"
    counts: dict[str, Any] = {k: v for k, v in erased.items() if k != "digest"}
    assert counts == {
        "leads": 1, "messages": 2, "events": 0, "campaign_recipients": 1, "import_errors": 1,
        "suppressions": 1,
    }  # fmt: skip
    assert (after["lead"], after["messages"], after["campaign_recipients"]) == (None, [], [])
    assert after["import_errors"] == []
    assert after["suppression"]["email"] == erased["digest"]
    assert set(again.values()) == {0, erased["digest"]}
    assert_error(refused, 422, "RECIPIENT_SUPPRESSED")
    assert still["lead"]["email"] == other
    assert len(still["campaign_recipients"]) == 1
    # Nothing the database keeps names her any more; the other leads are as they were.
    assert asyncio.run(rows_naming(database, person)) == []
    assert asyncio.run(rows_naming(database, other)) != []
