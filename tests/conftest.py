from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests import redis_server
from tests.postgres import fresh_migrated_database, server_url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    with server_url() as url:
        yield url


@pytest.fixture(scope="session")
async def postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """A migrated database of its own for this test session."""
    async with fresh_migrated_database(postgres_server) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'leadmail.db'}"


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A Redis that answers (tests/redis_server.py): skipped without one, failed in CI."""
    return redis_server.server_url()
