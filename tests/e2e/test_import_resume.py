"""A server killed in the middle of an import (SIGKILL: no shutdown at all), started again
on the same SQLite database: the import resumes from its last written batch and ends with
every row counted once and every lead written once."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.server import running_server, server_with_key
from tests.e2e.test_lead_files import finished
from tests.support.envelope import IMPORTS

ROWS = 30_000


def test_a_server_killed_mid_import_resumes_it_when_it_starts_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    lines = ["email,name"] + [f"resume{n}@example.com,Lead {n}" for n in range(ROWS)]
    with server_with_key(url, tmp_path, name="first") as first:
        assert first.primary is not None
        secret = first.primary.secret
        with first.client(secret) as api:
            posted = api.post(
                IMPORTS,
                content="\n".join(lines).encode(),
                headers={"Content-Type": "text/csv"},
            )
            assert posted.status_code == 202, posted.text
            import_id = posted.json()["data"]["id"]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # until a batch or more is written
                progress = api.get(f"{IMPORTS}/{import_id}").json()["data"]
                if progress["rows"] >= 2_000:
                    break
                time.sleep(0.02)
        first.process.kill()
        first.process.wait()
    assert 0 < progress["rows"] < ROWS, progress  # killed mid-way

    with running_server(url, tmp_path, name="second") as second, second.client(secret) as api:
        done = finished(api, import_id)
        count = api.get("/api/v1/leads/count").json()["data"]["count"]

    assert done["status"] == "done", done
    assert (done["rows"], done["created"], done["updated"]) == (ROWS, ROWS, 0)
    assert (done["skipped"], done["failed"]) == (0, 0)
    assert count == ROWS
    assert '"imports_resumed"' in second.stderr()
