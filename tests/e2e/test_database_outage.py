"""Postgres goes away under a running server and comes back: 503s, then recovery by itself."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from tests.e2e.keys import create_keys
from tests.e2e.names import new_email, new_name
from tests.e2e.server import LeadmailServer, running_server
from tests.e2e.tcp_proxy import TcpProxy, tcp_proxy
from tests.postgres import fresh_migrated_database
from tests.support.envelope import LEADS, assert_error, ok_data

pytestmark = pytest.mark.postgres

CONNECT_TIMEOUT_S = 2
FAIL_FAST_S = 5.0
RECOVERY_S = 10.0


@pytest.fixture
async def migrated_database(postgres_server: str) -> AsyncIterator[str]:
    """A fresh database, migrated directly (not through the proxy)."""
    async with fresh_migrated_database(postgres_server) as url:
        yield url


def through(url: str, proxy: TcpProxy) -> str:
    """The same database URL, with the proxy's address instead of the server's."""
    parts = urlsplit(url)
    credentials, _, _ = parts.netloc.rpartition("@")
    prefix = f"{credentials}@" if credentials else ""
    return urlunsplit(parts._replace(netloc=f"{prefix}127.0.0.1:{proxy.port}"))


def test_outage_gives_503_and_the_server_recovers_by_itself(
    migrated_database: str, tmp_path: Path
) -> None:
    parts = urlsplit(migrated_database)
    [key] = create_keys(migrated_database, tmp_path, new_name("outage-school"))

    with (
        tcp_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy,
        running_server(
            through(migrated_database, proxy),
            tmp_path,
            {"LEADMAIL_DB_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT_S)},
        ) as server,
        server.client(key.secret) as api,
    ):
        before = ok_data(api.post(LEADS, json={"name": "Before", "email": new_email("b")}))
        ok_data(api.get(LEADS))
        assert proxy.open_connections > 0  # the server really talks through the proxy

        proxy.stop()
        lost_email = new_email("during")
        attempts: list[Callable[[], httpx.Response]] = [
            lambda: api.get(LEADS),
            lambda: api.get(f"{LEADS}/{before['lead_id']}"),
            lambda: api.post(LEADS, json={"name": "During", "email": lost_email}),
        ]
        for attempt in attempts:
            started = time.monotonic()
            response = attempt()
            elapsed = time.monotonic() - started
            assert_error(response, 503, "STORAGE_UNAVAILABLE")
            assert response.headers.get("retry-after"), response.headers
            assert elapsed < FAIL_FAST_S, f"503 took {elapsed:.1f} s"

        # /ready says so, at once, with the reason; /health (no I/O) is not concerned.
        started = time.monotonic()
        ready = httpx.get(f"{server.base_url}/ready", timeout=FAIL_FAST_S)
        assert time.monotonic() - started < FAIL_FAST_S
        assert_error(ready, 503, "NOT_READY")
        assert ready.json()["error"].startswith("The database is unreachable")
        assert httpx.get(f"{server.base_url}/health").status_code == 200

        proxy.start()
        statuses = poll_until_ok(api, server)
        assert set(statuses) <= {200, 503}, statuses
        assert ok_data(httpx.get(f"{server.base_url}/ready")) == {"status": "ready"}

        assert ok_data(api.get(f"{LEADS}/{before['lead_id']}")) == before
        ok_data(api.post(LEADS, json={"name": "After", "email": new_email("a")}))
        assert ok_data(api.get(LEADS, params={"email": lost_email}))["items"] == []

    stderr = server.stderr()
    assert "unhandled_error" not in stderr, stderr
    assert "storage_unavailable" in stderr, stderr
    assert through(migrated_database, proxy) not in stderr
    assert key.secret not in stderr


def poll_until_ok(api: httpx.Client, server: LeadmailServer) -> list[int]:
    """GET the leads until one answers 200, within RECOVERY_S; return every status seen."""
    statuses: list[int] = []
    deadline = time.monotonic() + RECOVERY_S
    while time.monotonic() < deadline:
        response = api.get(LEADS)
        statuses.append(response.status_code)
        if response.status_code == 200:
            return statuses
        time.sleep(0.2)
    pytest.fail(
        f"no recovery within {RECOVERY_S} s; statuses {statuses}\n{server.stderr()}",
        pytrace=False,
    )
