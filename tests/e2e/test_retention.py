"""Retention with the real server, worker and CLI, on SQLite and on Postgres.

Rows are made old the only way there is without waiting 90 days: the test moves their
``created_at`` back in the database (and an import's ``finished_at``), then

- ``leadmail purge`` removes the messages older than the retention days with their
  events, the idempotency claims older than 24 h and the error rows of an import finished
  before the cutoff, and prints the counts; the API no longer finds those messages, the
  campaign's recipients keep their status and lose their ``message_id``, a key whose claim
  went is a new request, and everything newer is untouched;
- the scheduled purge (LEADMAIL_RETENTION_SCHEDULE, here every second) does the same by
  itself, on the server (SQLite) or on a `leadmail worker` (Postgres).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from tests.e2e.campaigns import CAMPAIGNS, CampaignRig, Worker, campaign_rig, stderr_events
from tests.e2e.mail import SENDER
from tests.support.envelope import IMPORTS, MESSAGES, SEND, assert_error, ok_data

NEVER = "0 0 1 1 *"  # the scheduled purge out of the way of `leadmail purge`'s counts
EVERY_SECOND = "* * * * * *"
DAYS = 30  # LEADMAIL_RETENTION_DAYS in these tests
AGED = timedelta(days=DAYS + 1)


def age(own_database_url: str, table: str, column: str, key: str, ids: list[str]) -> None:
    """``column`` of the rows of ``table`` whose ``key`` is among ``ids`` moved AGED back."""
    if own_database_url.startswith("sqlite:"):
        with contextlib.closing(sqlite3.connect(own_database_url.removeprefix("sqlite:///"))) as db:
            for row_id in ids:
                (stored,) = db.execute(
                    f'SELECT "{column}" FROM "{table}" WHERE "{key}" = ?', (row_id,)
                ).fetchone()
                moved = datetime.fromisoformat(stored) - AGED  # stored as Piccolo writes it
                db.execute(
                    f'UPDATE "{table}" SET "{column}" = ? WHERE "{key}" = ?', (str(moved), row_id)
                )
            db.commit()
        return

    async def postgres() -> None:
        connection = await asyncpg.connect(own_database_url)
        try:
            await connection.execute(
                f'UPDATE "{table}" SET "{column}" = "{column}" - $1::interval'
                f' WHERE "{key}" = ANY($2)',
                AGED,
                ids,
            )
        finally:
            await connection.close()

    asyncio.run(postgres())


def plain(to: str) -> dict[str, str]:
    return {"to": to, "from": SENDER, "subject": "Open day", "html": "<p>Come along</p>"}


def sent(api: httpx.Client, to: str, key: str | None = None) -> str:
    headers = {"Idempotency-Key": key} if key else {}
    message_id: str = ok_data(api.post(SEND, json=plain(to), headers=headers))["id"]
    return message_id


def imported_with_an_error_row(api: httpx.Client, lead: str) -> str:
    """A finished import of two rows: ``lead``, and one that is not an address."""
    answer = api.post(
        IMPORTS,
        params={"mode": "create"},
        content=f"email,name\nnot-an-address,Nobody\n{lead},New\n".encode(),
        headers={"Content-Type": "text/csv"},
    )
    assert answer.status_code == 202, answer.text
    import_id: str = answer.json()["data"]["id"]
    deadline = time.monotonic() + 30
    while (done := ok_data(api.get(f"{IMPORTS}/{import_id}")))["status"] != "done":
        assert time.monotonic() < deadline, done
        time.sleep(0.1)
    assert done["failed"] == 1, done
    return import_id


def import_errors(api: httpx.Client, import_id: str) -> list[Any]:
    rows: list[Any] = ok_data(api.get(f"{IMPORTS}/{import_id}/errors"))["items"]
    return rows


@contextlib.contextmanager
def running(
    own_database_url: str, tmp_path: Path, schedule: str
) -> Iterator[tuple[CampaignRig, Worker | None]]:
    """The campaign rig (server, stand-in, key) with the retention settings, and on
    Postgres a `leadmail worker` (the server there runs none)."""
    with campaign_rig(
        own_database_url,
        tmp_path,
        "resend",
        RETENTION_DAYS=str(DAYS),
        RETENTION_SCHEDULE=schedule,
    ) as rig:
        worker = rig.worker() if not own_database_url.startswith("sqlite:") else None
        if worker is None:
            yield rig, None
            return
        with worker as started:
            yield rig, started


def test_leadmail_purge_removes_what_is_past_its_time_and_says_so(
    own_database_url: str, tmp_path: Path
) -> None:
    with running(own_database_url, tmp_path, NEVER) as (rig, _):
        rig.leads(3)
        campaign_id = rig.create()
        assert rig.wait_for(campaign_id, "done")["counts"]["sent"] == 3
        with rig.client() as api:
            recipients = ok_data(api.get(f"{CAMPAIGNS}/{campaign_id}/recipients"))["items"]
            campaign_messages = [r["message_id"] for r in recipients]
            old_plain = sent(api, "ada@example.com", key="order-1")
            new_plain = sent(api, "ada@example.com", key="order-2")
            old_import = imported_with_an_error_row(api, "old.lead@example.com")
            new_import = imported_with_an_error_row(api, "new.lead@example.com")
        url = rig.server.database_url
        age(url, "messages", "created_at", "message_id", [*campaign_messages, old_plain])
        age(url, "idempotency_keys", "created_at", "key", ["order-1"])
        age(url, "lead_imports", "finished_at", "import_id", [old_import])

        purged = rig.cli("purge")

        assert purged.returncode == 0, purged.describe()
        said = {
            line.rsplit(maxsplit=1)[0].strip(): line.rsplit(maxsplit=1)[1]
            for line in purged.stdout.splitlines()[:-1]
        }
        assert said[f"messages older than {DAYS} days"] == "4"
        assert said["idempotency claims older than 24 h"] == "1"
        assert said["campaign recipients unlinked (status kept)"] == "3"
        assert said[f"import error rows older than {DAYS} days"] == "1"
        assert purged.stdout.splitlines()[-1].startswith("Removed 6 rows in ")
        with rig.client() as api:
            for gone in [*campaign_messages, old_plain]:
                assert_error(api.get(f"{MESSAGES}/{gone}"), 404, "MESSAGE_NOT_FOUND")
            assert ok_data(api.get(f"{MESSAGES}/{new_plain}"))["id"] == new_plain
            after = ok_data(api.get(f"{CAMPAIGNS}/{campaign_id}/recipients"))["items"]
            assert [(r["status"], r["message_id"]) for r in after] == [("sent", None)] * 3
            assert ok_data(api.get(f"{CAMPAIGNS}/{campaign_id}"))["counts"]["sent"] == 3
            assert import_errors(api, old_import) == []
            assert len(import_errors(api, new_import)) == 1
            # The claim that went: its key is a new request; the other is still replayed.
            assert sent(api, "ada@example.com", key="order-1") != old_plain
            replay = api.post(
                SEND, json=plain("ada@example.com"), headers={"Idempotency-Key": "order-2"}
            )
            assert replay.headers.get("Idempotent-Replayed") == "true"
        again = rig.cli("purge", "--json")
        assert again.returncode == 0, again.describe()
        assert '"messages": 0' in again.stdout


def test_the_scheduled_purge_runs_by_itself(own_database_url: str, tmp_path: Path) -> None:
    with running(own_database_url, tmp_path, EVERY_SECOND) as (rig, worker):
        with rig.client() as api:
            old = sent(api, "grace@example.com")
            new = sent(api, "grace@example.com")
        age(rig.server.database_url, "messages", "created_at", "message_id", [old])

        deadline = time.monotonic() + 20
        with rig.client() as api:
            while api.get(f"{MESSAGES}/{old}").status_code == 200:
                assert time.monotonic() < deadline, "the scheduled purge did not run"
                time.sleep(0.2)
            assert_error(api.get(f"{MESSAGES}/{old}"), 404, "MESSAGE_NOT_FOUND")
            assert ok_data(api.get(f"{MESSAGES}/{new}"))["id"] == new
        logs = worker.stderr() if worker is not None else rig.server.stderr()
        assert stderr_events(logs, "purged") >= 1, logs
