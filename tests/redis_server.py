"""Where the tests' Redis comes from: ``LEADMAIL_TEST_REDIS_URL`` (CI and `make test` point
it at the machine's server). Unset, or no Redis answering there: the Redis tests skip,
except when ``CI=true``: then that is a failure, as for Postgres (tests/postgres.py).

Each test keeps its keys under a prefix of its own, deleted afterwards, so tests (and
test runs) sharing one Redis never see each other's counts.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator

import pytest
import redis
import redis.asyncio

from tests.postgres import in_ci

ENV_VAR = "LEADMAIL_TEST_REDIS_URL"


def unavailable(reason: str) -> None:
    message = f"Redis is needed: {reason}"
    if in_ci():
        pytest.fail(f"{message}; in CI a skipped Redis test is a failure", pytrace=False)
    pytest.skip(message)


def server_url() -> str:
    """The URL of a Redis that answers, or a skip (a failure in CI)."""
    url = os.environ.get(ENV_VAR, "").strip()
    if not url:
        unavailable(f"set {ENV_VAR} (e.g. redis://127.0.0.1:6379/0)")
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as e:
        unavailable(f"no Redis answers at {ENV_VAR} ({type(e).__name__})")
    finally:
        client.close()
    return url


def new_prefix() -> str:
    return f"leadmail-test:{secrets.token_hex(6)}"


@contextlib.asynccontextmanager
async def keys_deleted(url: str, prefix: str) -> AsyncIterator[redis.asyncio.Redis]:
    """A client of the test's own; every key under ``prefix`` is deleted afterwards."""
    client = redis.asyncio.Redis.from_url(url)
    try:
        yield client
    finally:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
