"""Files with rows of megabytes through the real ``leadmail serve``: the import ends (each
long row one failed row, the others imported) while another account's requests stay fast
(Postgres); SIGTERM in the middle of an import stops the server within its drain time, and
the import resumes when it starts again; an import whose server dies in every run is failed
instead of run forever (SQLite: the server resumes its imports as it starts)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.keys import create_keys
from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer, running_server, server_with_key
from tests.e2e.test_lead_files import finished
from tests.support.envelope import IMPORTS, LEADS, bearer

# No stall: the splitter these files broke held the event loop 1 to 24 s a row, and the
# import never ended. The bounds tell that apart from a busy machine (this test shares two
# cores with the rest of the suite, in parallel); the latency figure itself, p99 <= 100 ms
# of another account's GET, is measured by `make bench` (scenario LR, bench/README.md).
P99_MS = 300.0
MAX_MS = 2_000.0
LONG_LINE = 4_000_000  # characters of one line, over several of the stored 1 MiB pieces
LONG_NOTE_LINES = 100_000  # lines of a quoted note of about 2 MB, over two pieces


def long_file(prefix: str, rows: int) -> tuple[bytes, int]:
    """A file with ``rows`` good rows around a 4 MB line, a 2 MB quoted note of many lines
    and a bad email; and the row number of the bad email."""
    half = rows // 2
    lines = ["email,name,note"]
    lines += [f"{prefix}{n}@example.com,Lead {n}," for n in range(half)]
    lines.append(f"{prefix}-long@example.com,Long,{'x' * LONG_LINE}")
    note = 'a "quoted" note, and\n' * LONG_NOTE_LINES
    lines.append(f'{prefix}-note@example.com,Note,"{note.replace(chr(34), 2 * chr(34))}"')
    lines.append("not-an-address,Bad,")
    bad_row = len(lines)  # as a spreadsheet numbers it
    lines += [f"{prefix}{n}@example.com,Lead {n}," for n in range(half, rows)]
    return ("\r\n".join(lines) + "\r\n").encode(), bad_row


class Poller(threading.Thread):
    """GET /api/v1/leads/{id} of another account, one request at a time, until stopped."""

    def __init__(self, base_url: str, secret: str, lead_id: str) -> None:
        super().__init__(daemon=True)
        self.client = httpx.Client(base_url=base_url, headers=bearer(secret), timeout=30)
        self.lead_id = lead_id
        self.latencies_ms: list[float] = []
        self.failures: list[str] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        with self.client:
            while not self.stopped.is_set():
                started = time.perf_counter()
                try:
                    response = self.client.get(f"{LEADS}/{self.lead_id}")
                except httpx.HTTPError as e:
                    self.failures.append(repr(e))
                    continue
                self.latencies_ms.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    self.failures.append(f"{response.status_code} {response.text[:200]}")
                time.sleep(0.005)

    def p99(self) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


@pytest.mark.postgres
def test_rows_of_megabytes_end_as_failed_rows_while_other_requests_stay_fast(
    postgres_e2e_server: LeadmailServer,
) -> None:
    server = postgres_e2e_server
    importer, other = server.keys_for("long-rows", "long-rows-neighbour")
    with server.client(other.secret) as api:
        lead = api.post(LEADS, json={"name": "Neighbour", "email": "n@example.com"})
        assert lead.status_code == 200, lead.text
    data, bad_row = long_file("long", 4_000)
    poller = Poller(server.base_url, other.secret, lead.json()["data"]["lead_id"])
    poller.start()
    try:
        with server.client(importer.secret) as api:
            api.timeout = httpx.Timeout(60)
            posted = api.post(IMPORTS, content=data, headers={"Content-Type": "text/csv"})
            assert posted.status_code == 202, posted.text
            done = finished(api, posted.json()["data"]["id"])
            errors = api.get(f"{IMPORTS}/{done['id']}/errors").json()["data"]["items"]
    finally:
        poller.stopped.set()
        poller.join()

    assert done["status"] == "done", done
    assert (done["rows"], done["created"], done["failed"]) == (4_003, 4_000, 3)
    assert [(e["row"], e["field"]) for e in errors] == [
        (2_002, "row"),
        (2_003, "row"),
        (bad_row, "email"),
    ]
    assert "not imported" in errors[0]["message"]
    assert not poller.failures, poller.failures[:5]
    assert len(poller.latencies_ms) > 20
    slowest = max(poller.latencies_ms)
    assert poller.p99() < P99_MS, f"p99 {poller.p99():.1f} ms, max {slowest:.1f} ms"
    assert slowest < MAX_MS, f"p99 {poller.p99():.1f} ms, max {slowest:.1f} ms"


def import_running(api: httpx.Client, data: bytes, until_rows: int) -> tuple[str, Any]:
    """POST the file; its id and progress once ``until_rows`` rows are written."""
    posted = api.post(IMPORTS, content=data, headers={"Content-Type": "text/csv"})
    assert posted.status_code == 202, posted.text
    import_id = posted.json()["data"]["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        progress = api.get(f"{IMPORTS}/{import_id}").json()["data"]
        if progress["rows"] >= until_rows or progress["status"] in ("done", "failed"):
            return import_id, progress
        time.sleep(0.02)
    raise AssertionError(f"import {import_id} wrote no {until_rows} rows in 60 s: {progress}")


def test_sigterm_mid_import_stops_the_server_in_time_and_the_import_resumes(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    rows = 40_000
    data, _ = long_file("term", rows)
    with server_with_key(url, tmp_path, name="first") as first:
        assert first.primary is not None
        secret = first.primary.secret
        with first.client(secret) as api:
            api.timeout = httpx.Timeout(60)
            import_id, progress = import_running(api, data, until_rows=rows // 2 + 2_000)
        assert progress["status"] == "running", progress  # past the long rows, not done
        stopping = time.monotonic()
        first.stop_gracefully()  # SIGTERM: exits in time (else killed, and this fails)
        stopped_s = time.monotonic() - stopping

    with running_server(url, tmp_path, name="second") as second, second.client(secret) as api:
        done = finished(api, import_id)

    assert stopped_s < 5.0, stopped_s
    assert done["status"] == "done", done
    assert (done["rows"], done["created"], done["failed"]) == (rows + 3, rows, 3)


def test_an_import_whose_server_dies_in_every_run_ends_failed(tmp_path: Path) -> None:
    """Each run is killed (SIGKILL) before it writes a batch; the server that starts after
    the last allowed run fails the import instead of running it again."""
    url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    lines = ["email,name"] + [f"dies{n}@example.com,Lead {n}" for n in range(300_000)]
    [key] = create_keys(url, tmp_path, new_name("dies"))
    runs, status = 0, "running"
    while status == "running":
        assert runs < 10, "the import was run again and again"
        with (
            running_server(url, tmp_path, name=f"run-{runs}") as server,
            server.client(key.secret) as api,
        ):
            if runs == 0:
                posted = api.post(
                    IMPORTS,
                    content=("\n".join(lines) + "\n").encode(),
                    headers={"Content-Type": "text/csv"},
                )
                assert posted.status_code == 202, posted.text
                import_id = posted.json()["data"]["id"]
            runs += 1
            status = after_claim(server, import_id, run=runs)
            if status == "running":  # in its first pass: no batch written
                server.process.kill()
                server.process.wait()
            else:
                found = api.get(f"{IMPORTS}/{import_id}").json()["data"]

    assert runs == 4  # three runs died; the fourth gave up on it
    assert (found["status"], found["rows"], found["created"]) == ("failed", 0, 0)
    assert "stopped after 3 runs" in found["error"], found


def after_claim(server: LeadmailServer, import_id: str, run: int) -> str:
    """The import's status a moment after its run number ``run`` claimed it (read in the
    database: the API does not show attempts); a run still going has written no batch."""
    path = server.database_url.removeprefix("sqlite:///")

    def stored() -> tuple[str, int, int] | None:
        with sqlite3.connect(path) as db:
            found: tuple[str, int, int] | None = db.execute(
                "SELECT status, attempts, rows_done FROM lead_imports WHERE import_id = ?",
                (import_id,),
            ).fetchone()
        return found

    deadline = time.monotonic() + 30
    while (row := stored()) is None or (row[0] == "running" and row[1] < run):
        assert time.monotonic() < deadline, f"run {run} did not claim the import: {row}"
        time.sleep(0.01)
    time.sleep(0.3)  # time to fail it, if it does
    row = stored()
    assert row is not None
    if row[0] == "running":
        assert row[1:] == (run, 0), row
    return row[0]
