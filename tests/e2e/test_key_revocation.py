"""A key revoked while a server's listening connection has died silently (a partition: no
error, no close, no notification) stops working on that server within 5 s: the key cache's
heartbeat finds the connection dead, the cache is not served past 5 s without an answered
heartbeat, and the server listens again on a new connection."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from leadmail.adapters.db.key_cache import APPLICATION_NAME
from tests.e2e.cli import cli_env, run_cli
from tests.e2e.keys import create_keys
from tests.e2e.names import new_name
from tests.e2e.server import running_server
from tests.e2e.tcp_proxy import tcp_proxy
from tests.e2e.test_database_outage import through
from tests.postgres import fresh_migrated_database
from tests.support.envelope import LEADS, assert_error

pytestmark = pytest.mark.postgres

REVOKED_WITHIN_S = 5.0


@pytest.fixture
async def migrated_database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_migrated_database(postgres_server) as url:
        yield url


async def listening_port(database_url: str) -> int:
    """The client port (the proxy's, towards Postgres) of the key cache's connection."""
    connection = await asyncpg.connect(database_url)
    try:
        database = urlsplit(database_url).path.lstrip("/")
        deadline = time.monotonic() + 10
        while True:
            port = await connection.fetchval(
                "SELECT client_port FROM pg_stat_activity"
                " WHERE datname = $1 AND application_name = $2",
                database,
                APPLICATION_NAME,
            )
            if port is not None:
                return int(port)
            assert time.monotonic() < deadline, "no key cache connection"
            time.sleep(0.1)
    finally:
        await connection.close()


async def test_a_revoked_key_stops_within_5_s_when_the_listener_is_silenced(
    migrated_database: str, tmp_path: Path
) -> None:
    parts = urlsplit(migrated_database)
    [key] = create_keys(migrated_database, tmp_path, new_name("silenced"))
    with (
        tcp_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy,
        running_server(through(migrated_database, proxy), tmp_path) as server,
        server.client(key.secret) as api,
    ):
        assert api.get(LEADS).status_code == 200  # the key is cached now
        proxy.silence(await listening_port(migrated_database))
        assert api.get(LEADS).status_code == 200

        revoked = run_cli(["keys", "revoke", key.key_id], cli_env(migrated_database), tmp_path)
        assert revoked.returncode == 0, revoked.describe()
        started = time.monotonic()
        while (answer := api.get(LEADS)).status_code == 200:
            assert time.monotonic() - started < REVOKED_WITHIN_S + 1, "still served"
            time.sleep(0.1)
        took = time.monotonic() - started

        assert_error(answer, 401, "UNAUTHORIZED")
        assert took <= REVOKED_WITHIN_S, f"revoked after {took:.1f} s"
        # The server listens again, on a new connection (not silenced).
        deadline = time.monotonic() + 10
        while "key_cache_on" not in server.stderr():
            assert time.monotonic() < deadline, server.stderr()
            time.sleep(0.2)
    assert "heartbeat: TimeoutError" in server.stderr()
