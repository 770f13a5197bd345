"""End-to-end fixtures: the real ``leadmail`` command, run as subprocesses, driven over HTTP.

Nothing here runs the app in-process: every server is ``leadmail serve`` in a process of
its own, every key comes from ``leadmail keys create``, exactly as an operator does it.
The helpers live in modules by concern, imported by the tests that use them: cli.py (the
command), keys.py, server.py (the ``serve`` process), logs.py (what it wrote), mail.py
(provider settings and what the stand-in received), names.py, tcp_proxy.py. This file
holds the servers the session shares.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.e2e.keys import IssuedKey
from tests.e2e.server import LeadmailServer, server_with_key
from tests.postgres import fresh_database


@pytest.fixture(scope="session")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadmailServer]:
    """One server on an embedded SQLite file, shared by the session."""
    workdir = tmp_path_factory.mktemp("sqlite-server")
    with server_with_key(
        f"sqlite:///{workdir / 'leadmail.db'}", workdir, key_first=True
    ) as running:
        yield running


@pytest.fixture(scope="session")
async def e2e_postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """An empty Postgres database for the session's server (``leadmail serve`` migrates it)."""
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(scope="session")
def postgres_e2e_server(
    e2e_postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LeadmailServer]:
    """One server on a fresh Postgres database, shared by the session."""
    workdir = tmp_path_factory.mktemp("postgres-server")
    with server_with_key(e2e_postgres_url, workdir, key_first=False) as running:
        yield running


@pytest.fixture(
    scope="session",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def server(request: pytest.FixtureRequest) -> LeadmailServer:
    """The shared server, once per database."""
    name = "sqlite_server" if request.param == "sqlite" else "postgres_e2e_server"
    running: LeadmailServer = request.getfixturevalue(name)
    return running


@pytest.fixture
def primary_key(server: LeadmailServer) -> IssuedKey:
    assert server.primary is not None
    return server.primary


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def own_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database of the test's own, once per kind."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'leadmail.db'}"
        return
    postgres: str = request.getfixturevalue("postgres_server")
    async with fresh_database(postgres) as url:
        yield url
