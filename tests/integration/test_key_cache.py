"""The API key cache on Postgres: served from memory, evicted by any process's revoke."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.key_cache import CONFIRMED_S, HEARTBEAT_S, CachedApiKeyStore
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.domain.keys import ApiKey, mint_key

pytestmark = pytest.mark.postgres
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class Counting(PiccoloApiKeyStore):
    lookups = 0

    async def find_by_digest(self, digest: str) -> ApiKey | None:
        self.lookups += 1
        return await super().find_by_digest(digest)


@pytest.fixture
async def database(postgres_url: str) -> AsyncIterator[Database]:
    async with Database.from_url(postgres_url).running() as db:
        yield db


async def until(condition: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail("condition not met in time")
        await asyncio.sleep(0.02)


async def test_a_key_is_read_once_then_served_from_memory(database: Database) -> None:
    inner = Counting(database)
    cache = CachedApiKeyStore(inner, database.connect_dedicated)
    await cache.start()
    try:
        assert cache.listening
        minted = mint_key()
        await cache.create_key(
            account_name="cache-a", label="", digest=minted.digest, prefix=minted.prefix, now=NOW
        )
        first = await cache.find_by_digest(minted.digest)
        second = await cache.find_by_digest(minted.digest)
        assert first is not None
        assert second == first
        assert inner.lookups == 1
    finally:
        await cache.close()


async def test_a_revoke_from_another_process_evicts_the_key(
    database: Database, postgres_url: str
) -> None:
    cache = CachedApiKeyStore(PiccoloApiKeyStore(database), database.connect_dedicated)
    await cache.start()
    try:
        minted = mint_key()
        key = await cache.create_key(
            account_name="cache-b", label="", digest=minted.digest, prefix=minted.prefix, now=NOW
        )
        cached = await cache.find_by_digest(minted.digest)
        assert cached is not None
        assert cached.active

        # Another Database object stands for another process (the CLI).
        async with Database.from_url(postgres_url).running() as other:
            await PiccoloApiKeyStore(other).revoke(key.key_id, NOW)

        async def revoked() -> bool:
            found = await cache.find_by_digest(minted.digest)
            return found is not None and not found.active

        await until(revoked)
    finally:
        await cache.close()


async def test_nothing_is_cached_while_not_listening(database: Database) -> None:
    inner = Counting(database)

    async def refuse() -> object:
        raise OSError("listener unreachable")

    cache = CachedApiKeyStore(inner, refuse)
    await cache.start()
    try:
        assert not cache.listening
        minted = mint_key()
        await cache.create_key(
            account_name="cache-c", label="", digest=minted.digest, prefix=minted.prefix, now=NOW
        )
        await cache.find_by_digest(minted.digest)
        await cache.find_by_digest(minted.digest)
        assert inner.lookups == 2
    finally:
        await cache.close()


async def test_a_lost_listener_turns_the_cache_off(database: Database) -> None:
    inner = Counting(database)
    cache = CachedApiKeyStore(inner, database.connect_dedicated)
    await cache.start()
    try:
        minted = mint_key()
        await cache.create_key(
            account_name="cache-d", label="", digest=minted.digest, prefix=minted.prefix, now=NOW
        )
        await cache.find_by_digest(minted.digest)
        assert cache._connection is not None
        cache._connection.terminate()

        async def off() -> bool:
            return not cache.listening

        await until(off)
        await cache.find_by_digest(minted.digest)
        assert inner.lookups == 2
    finally:
        await cache.close()


async def test_the_cache_is_served_only_within_5_s_of_an_answered_heartbeat(
    database: Database,
) -> None:
    clock = [1000.0]
    inner = Counting(database)
    cache = CachedApiKeyStore(inner, database.connect_dedicated, monotonic=lambda: clock[0])
    await cache.start()
    try:
        minted = mint_key()
        await cache.create_key(
            account_name="cache-hb", label="", digest=minted.digest, prefix=minted.prefix, now=NOW
        )
        await cache.find_by_digest(minted.digest)
        await cache.find_by_digest(minted.digest)
        assert inner.lookups == 1

        clock[0] += CONFIRMED_S + 0.1  # no heartbeat answered since: unconfirmed
        assert not cache.listening
        await cache.find_by_digest(minted.digest)
        assert inner.lookups == 2  # read again, not served from memory

        await until(lambda: _true(cache.listening), seconds=HEARTBEAT_S * 3)
        # A heartbeat sent at the new time was answered (every revocation before it was
        # heard, and there was none): the entry is served from memory again.
        await cache.find_by_digest(minted.digest)
        await cache.find_by_digest(minted.digest)
        assert inner.lookups == 2
    finally:
        await cache.close()


async def _true(value: bool) -> bool:
    return value
