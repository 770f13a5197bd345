"""Where the tests' PostgreSQL comes from.

1. ``LEADMAIL_TEST_DATABASE_URL`` (CI points it at the machine's server);
2. else a testcontainers container, when a Docker engine answers;
3. else the Postgres tests skip, except when ``CI=true``: then that is a failure.

Tests that need a database of their own (migrations) create one next to the given one.
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
import warnings
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import migrate

ENV_VAR = "LEADMAIL_TEST_DATABASE_URL"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    message = f"PostgreSQL is needed: {reason}"
    if in_ci():
        pytest.fail(f"{message}; in CI a skipped Postgres test is a failure", pytrace=False)
    pytest.skip(message)


@contextlib.contextmanager
def server_url() -> Iterator[str]:
    """A URL of a reachable Postgres server (its database may be reused by tests)."""
    url = os.environ.get(ENV_VAR, "").strip()
    if url:
        yield url
        return
    try:
        from testcontainers.community.postgres import PostgresContainer
    except ImportError:
        unavailable(f"set {ENV_VAR} (testcontainers is not installed)")
        return
    reason = ""
    # docker-py leaves its socket open when no engine answers; collect it here so the
    # ResourceWarning does not turn a clean skip into an error (warnings are errors).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            container = PostgresContainer("postgres:16-alpine", driver=None)
        except Exception as e:  # docker.errors.DockerException: no engine answers
            reason = f"set {ENV_VAR}, or run a Docker engine for testcontainers ({e})"
        gc.collect()
    if reason:
        unavailable(reason)
        return
    with container:
        yield container.get_connection_url()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextlib.asynccontextmanager
async def fresh_database(url: str) -> AsyncIterator[str]:
    """Create an empty database on the same server, yield its URL, drop it afterwards."""
    name = "leadmail_t_" + secrets.token_hex(6)
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield with_database(url, name)
    finally:
        admin = await asyncpg.connect(url)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@contextlib.asynccontextmanager
async def fresh_migrated_database(url: str) -> AsyncIterator[str]:
    """A fresh database with every migration applied; dropped afterwards."""
    async with fresh_database(url) as fresh:
        async with Database.from_url(fresh).running() as database:
            await migrate(database)
        yield fresh
