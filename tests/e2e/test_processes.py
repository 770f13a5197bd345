"""`leadmail serve --processes N` and a clean stop: two processes on one port answering
one API, /metrics adding up both (whichever answers), refused on SQLite; SIGTERM with sends
in flight answers them all, then exits 0."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.mmap_dict import MmapedDict

from tests.e2e.cli import leadmail_command
from tests.e2e.keys import create_keys
from tests.e2e.mail import email_env, provider_api_key
from tests.e2e.names import new_name
from tests.e2e.server import running_server, server_with_key
from tests.postgres import fresh_migrated_database
from tests.support.envelope import LEADS, SEND, bearer
from tests.support.standin import provider_standin

LABELS = {'method="GET"', 'route="/api/v1/leads"', 'status="200"'}
MAX_TRIES = 300  # requests, each on a connection of its own, until both processes served


@pytest.fixture
async def migrated_database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_migrated_database(postgres_server) as url:
        yield url


def pids_that_served(folder: Path) -> set[str]:
    """The processes whose own figures (their counter file) hold a GET /api/v1/leads."""
    served = set()
    for path in folder.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))  # type: ignore[no-untyped-call]
        if any("/api/v1/leads" in key and "requests" in key for key, *_ in values):
            served.add(path.name)
    return served


def leads_requests(text: str) -> float:
    """The count of GET /api/v1/leads answered 200 in the exposition ``text``."""
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        labels = set(rest.split("}")[0].split(","))
        if name == "leadmail_http_requests_total" and labels == LABELS:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no such sample in:\n{text}")


@pytest.mark.postgres
def test_two_processes_serve_one_port_and_metrics_add_up_both(
    migrated_database: str, tmp_path: Path
) -> None:
    [key] = create_keys(migrated_database, tmp_path, new_name("processes"))
    folder = tmp_path / "metrics"
    folder.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(folder)}
    with running_server(
        migrated_database, tmp_path, env, serve_args=["--processes", "2"]
    ) as server:
        sent = 0
        while len(pids_that_served(folder)) < 2:
            assert sent < MAX_TRIES, "one process answered every request"
            # A new connection each time: the kernel hands it to either process.
            answer = httpx.get(f"{server.base_url}{LEADS}", headers=bearer(key.secret))
            assert answer.status_code == 200, answer.text
            sent += 1
        for _ in range(2):  # whichever process answers the scrape, it counts both
            scraped = httpx.get(f"{server.base_url}/metrics")
            assert scraped.status_code == 200, scraped.text
            assert leads_requests(scraped.text) == sent
        served = server.stderr().count('"event":"serving"')
        code = server.stop()
    assert served == 2
    assert code == 0, server.stderr()


def test_more_than_one_process_is_refused_on_sqlite(tmp_path: Path) -> None:
    done = subprocess.run(
        [*leadmail_command(), "serve", "--processes", "2"],
        env={"LEADMAIL_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "leadmail: serve --processes needs Postgres: SQLite takes one server process"
        " (set LEADMAIL_DATABASE_URL to a postgresql:// URL)"
    ]


def test_sigterm_answers_the_sends_in_flight_then_exits_0(tmp_path: Path) -> None:
    api_key = provider_api_key("resend")
    with provider_standin(api_key=api_key, latency=2.0) as standin:
        env = email_env("resend", standin.url, api_key)
        with server_with_key(f"sqlite:///{tmp_path / 'l.db'}", tmp_path, extra_env=env) as server:
            assert server.primary is not None
            secret = server.primary.secret
            answers: list[int] = []

            def send(n: int) -> None:
                body = {"to": f"l{n}@example.com", "from": "school@example.com",
                        "subject": "Hi", "html": "<p>Hi</p>"}  # fmt: skip
                answer = httpx.post(
                    f"{server.base_url}{SEND}", json=body, headers=bearer(secret), timeout=30
                )
                answers.append(answer.status_code)

            threads = [threading.Thread(target=send, args=(n,)) for n in range(5)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 10
            while standin.request_count < 5:  # all five at the provider, none answered
                assert time.monotonic() < deadline, standin.request_count
                time.sleep(0.02)
            started = time.monotonic()
            code = server.stop()
            took = time.monotonic() - started
            for thread in threads:
                thread.join()

    assert code == 0, server.stderr()
    assert answers == [200] * 5
    assert took < 30
