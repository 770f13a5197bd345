from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from leadmail.adapters.db.engine import Database
from leadmail.adapters.db.migrate import migrate
from tests.postgres import fresh_database, server_url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    with server_url() as url:
        yield url


@pytest.fixture(scope="session")
async def postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """A migrated database of its own for this test session."""
    async with fresh_database(postgres_server) as url:
        database = Database.from_url(url)
        await database.start()
        try:
            await migrate(database)
        finally:
            await database.close()
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'leadmail.db'}"
