"""A server started with LEADMAIL_MIGRATE_ON_START=false on a database lacking its
migrations: it comes up, /health is 200 and /ready 503 (the API too) until `leadmail
migrate` has run; then /ready is 200 and the API serves, with no restart."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.cli import cli_env, run_cli
from tests.e2e.keys import create_keys
from tests.e2e.names import new_email, new_name
from tests.e2e.server import running_server
from tests.postgres import fresh_database
from tests.support.envelope import LEADS, assert_error, bearer, ok_data

# The server asks every second whether the migrations have been applied.
READY_AFTER_MIGRATE_S = 5.0


@pytest.fixture
async def empty_postgres(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def unmigrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'unmigrated.db'}"
    url: str = request.getfixturevalue("empty_postgres")
    return url


def test_a_server_waits_for_its_migrations_then_serves(unmigrated_url: str, tmp_path: Path) -> None:
    env = {"LEADMAIL_MIGRATE_ON_START": "false"}
    with running_server(unmigrated_url, tmp_path, env) as server:
        base = server.base_url
        assert ok_data(httpx.get(f"{base}/health")) == {"status": "ok"}
        waiting = assert_error(httpx.get(f"{base}/ready"), 503, "NOT_READY")
        assert "database migration(s) not applied yet" in waiting["error"]
        assert "leadmail migrate" in waiting["error"]
        # The API answers 503 too (no table is read before the migrations are there).
        refused = httpx.get(f"{base}{LEADS}", headers=bearer("lm_whatever"))
        assert_error(refused, 503, "STORAGE_UNAVAILABLE")

        migrated = run_cli(["migrate"], cli_env(unmigrated_url), tmp_path)
        assert migrated.returncode == 0, migrated.describe()
        deadline = time.monotonic() + READY_AFTER_MIGRATE_S
        while httpx.get(f"{base}/ready").status_code != 200:
            assert time.monotonic() < deadline, server.stderr()
            time.sleep(0.1)

        [key] = create_keys(unmigrated_url, tmp_path, new_name("late-school"))
        lead = ok_data(
            httpx.post(
                f"{base}{LEADS}",
                json={"name": "Ada", "email": new_email("ada")},
                headers=bearer(key.secret),
            )
        )
        assert lead["name"] == "Ada"

    stderr = server.stderr()
    assert "waiting_for_database" in stderr
    assert "database_ready" in stderr
    assert "unhandled_error" not in stderr
