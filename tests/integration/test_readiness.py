"""The database's readiness probe on both databases: unmigrated, partly migrated,
migrated, unreachable, silent."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import migrate, rollback_all
from leadmail.adapters.db.readiness import DatabaseReadiness, shipped_migrations
from tests.integration.test_storage_errors import (
    CLOSED_PORT_URL,
    build_ignoring_piccolos_version_probe,
)
from tests.postgres import fresh_database

pytestmark = pytest.mark.filterwarnings("ignore:.*Unable to (fetch server|connect)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """A started database with no table at all."""
    if request.param == "sqlite":
        async with Database.from_url(f"sqlite:///{tmp_path / 'ready.db'}").running() as db:
            yield db
        return
    server: str = request.getfixturevalue("postgres_server")
    async with fresh_database(server) as url, Database.from_url(url).running() as db:
        yield db


def test_the_code_ships_its_migrations() -> None:
    shipped = shipped_migrations()

    assert len(shipped) >= 28
    assert "2026-11-22T00:59:20:088300" in shipped  # the first one


async def test_an_empty_database_is_not_ready_and_says_what_to_run(
    empty_database: Database,
) -> None:
    reason = await DatabaseReadiness(empty_database).not_ready()

    assert reason is not None
    assert f"{len(shipped_migrations())} database migration(s) not applied yet" in reason
    assert "leadmail migrate" in reason


async def test_a_migrated_database_is_ready(empty_database: Database) -> None:
    await migrate(empty_database)

    assert await DatabaseReadiness(empty_database).not_ready() is None


async def test_one_migration_missing_is_not_ready(empty_database: Database) -> None:
    await migrate(empty_database)
    newest = max(shipped_migrations())
    await rollback_all(empty_database, down_to=newest)

    reason = await DatabaseReadiness(empty_database).not_ready()

    assert reason is not None
    assert reason.startswith("1 database migration(s) not applied yet")


async def test_an_unreachable_database_is_an_answer_not_an_error(tmp_path: Path) -> None:
    postgres = build_ignoring_piccolos_version_probe(CLOSED_PORT_URL)
    sqlite = Database.from_url(f"sqlite:///{tmp_path / 'no-such-directory' / 'x.db'}")

    for database in (postgres, sqlite):
        reason = await DatabaseReadiness(database).not_ready()
        assert reason is not None
        assert reason.startswith("The database is unreachable (")
        assert "postgres@" not in reason  # no URL, so no password, in the answer


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections (the kernel does) and never answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


async def test_a_silent_database_is_not_ready_within_the_probes_timeout(silent_port: int) -> None:
    database = build_ignoring_piccolos_version_probe(
        f"postgresql://postgres@127.0.0.1:{silent_port}/leadmail"
    )
    started = time.monotonic()

    reason = await DatabaseReadiness(database, timeout=0.5).not_ready()

    assert reason == "The database is unreachable (TimeoutError)"
    assert time.monotonic() - started < 2.0
