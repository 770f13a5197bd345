"""CSV import and export through the real ``leadmail serve`` (SQLite and Postgres: there
pgqueuer's worker runs the job) and the real ``leadmail leads import``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.server import LeadmailServer
from tests.support.envelope import EXPORT, IMPORTS, assert_error, bearer

ROWS = 2_500  # three batches


def rows(prefix: str, count: int = ROWS) -> str:
    lines = ["Email,Name,Tags,City"]
    lines += [f"{prefix}{n}@example.com,Lead {n},a|b,City {n % 5}" for n in range(count)]
    return "\r\n".join(lines) + "\r\n"


def finished(api: httpx.Client, import_id: str) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = api.get(f"{IMPORTS}/{import_id}")
        assert found.status_code == 200, found.text
        data = found.json()["data"]
        if data["status"] in ("done", "failed"):
            return data
        time.sleep(0.05)
    raise AssertionError(f"import {import_id} not finished in 60 s: {data}")


def chunked(data: bytes, size: int = 8192) -> Iterator[bytes]:
    """A body without Content-Length: the server counts it as it streams."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_a_streamed_import_runs_to_done_and_exports_back(server: LeadmailServer) -> None:
    [key] = server.keys_for("csv-school")
    with server.client(key.secret) as api:
        response = api.post(
            IMPORTS,
            content=chunked(rows("e2e").encode()),
            params={"tags": "imported"},
            headers={"Content-Type": "text/csv"},
        )
        assert response.status_code == 202, response.text
        done = finished(api, response.json()["data"]["id"])
        assert (done["status"], done["rows"], done["created"]) == ("done", ROWS, ROWS)

        exported = api.get(EXPORT, params={"tag": "imported"})
        assert exported.status_code == 200
        lines = exported.text.splitlines()
        assert lines[0] == "email,name,source,note,phone,tags,city"
        assert len(lines) == ROWS + 1
        assert "e2e7@example.com,Lead 7,,,,a;b;imported,City 2" in lines


def test_an_import_larger_than_the_limit_is_413_while_it_streams(
    server: LeadmailServer,
) -> None:
    [key] = server.keys_for("big-school")
    big = (rows("big", 10) + "x" * 1024 + "\r\n").encode() * 60_000  # about 60 MB
    with httpx.Client(base_url=server.base_url, headers=bearer(key.secret), timeout=60) as api:
        response = api.post(IMPORTS, content=chunked(big, 1 << 20))

        assert_error(response, 413, "PAYLOAD_TOO_LARGE")


def test_the_command_imports_a_file_with_its_summary(
    server: LeadmailServer, tmp_path: Path
) -> None:
    [key] = server.keys_for("cli-school")
    path = tmp_path / "leads.csv"
    path.write_text(rows("cli", 1_200) + "not-an-email,Nobody,,\r\n", encoding="utf-8-sig")

    result = server.cli("leads", "import", str(path), "--account", key.account, "--tags", "x")

    assert result.returncode == 0, result.describe()
    assert "1201 rows: 1200 created, 0 updated, 0 skipped, 1 failed" in result.stdout
    assert "row 1202 (not-an-email): email:" in result.stderr
    assert " rows" in result.stderr  # the progress bar
    with server.client(key.secret) as api:
        count = api.get("/api/v1/leads/count", params={"tag": "x"}).json()["data"]["count"]
    assert count == 1_200


def test_the_command_says_what_stops_it_on_one_line(server: LeadmailServer, tmp_path: Path) -> None:
    [key] = server.keys_for("cli-errors")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,Favourite Colour!\nAda,red\n")
    good = tmp_path / "good.csv"
    good.write_text("email\nada@example.com\n")

    for args, said in [
        (["leads", "import", str(bad), "--account", key.account], "Favourite Colour!"),
        (["leads", "import", str(good), "--account", "no-such-school"], "no account named"),
        (["leads", "import", str(tmp_path / "none.csv"), "--account", key.account], "no such"),
    ]:
        result = server.cli(*args)
        assert result.returncode == 2, result.describe()
        assert said in result.stderr, result.describe()
        assert "Traceback" not in result.stderr
