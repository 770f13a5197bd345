"""API keys served from memory, so a request costs no key query.

Correctness rests on Postgres LISTEN/NOTIFY: ``PiccoloApiKeyStore.revoke`` notifies on
``KEYS_CHANNEL`` (the CLI's revoke included, from any process), and every server evicts the key
at once. While the listening connection is down nothing is cached and every request reads
the database, as without this class. Entries also expire after ``max_age`` as a backstop.

A listening connection can also die silently (a partition, a firewall that drops it): no
error, no close, and no notification ever arrives. So a heartbeat asks it a query every
HEARTBEAT_S; Postgres sends a connection its pending notifications before it answers, so
an answer to a query sent at time t means every revocation committed before t has been
heard. The cache is served only within CONFIRMED_S of the last such t: whatever happens to
the connection, a revoked key stops working within CONFIRMED_S (5 s). A heartbeat that
gets no answer in HEARTBEAT_TIMEOUT_S drops the connection and listens on a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import asyncpg
import structlog

from leadmail.adapters.db.keys import KEYS_CHANNEL
from leadmail.domain.keys import ApiKey
from leadmail.ports.keys import ApiKeyStore

MAX_ENTRIES = 10_000
APPLICATION_NAME = "leadmail key cache"  # the listening connection's, in pg_stat_activity
RECONNECT_DELAY_S = 2.0
HEARTBEAT_S = 1.0  # a query on the listening connection, this often
HEARTBEAT_TIMEOUT_S = 2.0  # no answer this long: the connection is taken for dead
CONFIRMED_S = 5.0  # the cache is served this long after the last heartbeat was sent

log = structlog.get_logger("leadmail.db")


class CachedApiKeyStore(ApiKeyStore):
    def __init__(
        self,
        inner: ApiKeyStore,
        connect: Callable[[], Any],
        *,
        max_age: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``connect`` opens the dedicated asyncpg connection that listens."""
        self._inner = inner
        self._connect = connect
        self._max_age = max_age
        self._monotonic = monotonic
        self._entries: dict[str, tuple[ApiKey, float]] = {}
        # Bumped by every eviction: a lookup that began before one must not cache its
        # (possibly stale) answer.
        self._generation = 0
        self._connection: asyncpg.Connection | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None
        # When the query of the last answered heartbeat was sent (monotonic): every
        # revocation committed before it has been heard.
        self._confirmed_at = -math.inf
        self._closed = False

    @property
    def listening(self) -> bool:
        """The listening connection is up and answered a heartbeat sent within
        CONFIRMED_S: what the cache holds may be served."""
        return (
            self._connection is not None
            and not self._connection.is_closed()
            and self._monotonic() - self._confirmed_at < CONFIRMED_S
        )

    async def start(self) -> None:
        try:
            await self._listen()
        except (TimeoutError, OSError, asyncpg.PostgresError) as e:
            log.warning("key_cache_off", reason=type(e).__name__)
            self._schedule_reconnect()

    async def close(self) -> None:
        self._closed = True
        for task in (self._reconnecting, self._beating):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self._connection.close()
        self._forget_all()

    async def _listen(self) -> None:
        connection = await self._connect()
        sent = self._monotonic()
        connection.add_termination_listener(self._on_lost)
        await connection.add_listener(KEYS_CHANNEL, self._on_notice)
        self._forget_all()  # whatever happened while we were deaf
        self._connection = connection
        self._confirmed_at = sent
        if self._beating is None or self._beating.done():
            self._beating = asyncio.get_running_loop().create_task(self._heartbeat())

    async def _heartbeat(self) -> None:
        while not self._closed:
            await asyncio.sleep(HEARTBEAT_S)
            if self._connection is None or self._connection.is_closed():
                continue  # lost: _on_lost reconnects
            connection: asyncpg.Connection = self._connection
            sent = self._monotonic()
            try:
                async with asyncio.timeout(HEARTBEAT_TIMEOUT_S):
                    await connection.fetchval("SELECT 1")
            except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
                if connection is self._connection:
                    log.warning("key_cache_off", reason=f"heartbeat: {type(e).__name__}")
                    connection.terminate()  # (no goodbye: the peer may not be there)
                    self._lost(connection)
                continue
            if connection is self._connection:
                self._confirmed_at = sent

    def _on_lost(self, connection: object) -> None:
        if connection is not self._connection:
            return  # one the heartbeat gave up on already
        log.warning("key_cache_off", reason="listener connection lost")
        self._lost(connection)

    def _lost(self, connection: object) -> None:
        if connection is self._connection:
            self._connection = None
            self._forget_all()
            self._schedule_reconnect()

    def _schedule_reconnect(self) -> None:
        if self._closed or (self._reconnecting is not None and not self._reconnecting.done()):
            return
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        while not self._closed:
            await asyncio.sleep(RECONNECT_DELAY_S)
            try:
                await self._listen()
            except (TimeoutError, OSError, asyncpg.PostgresError):
                continue
            log.info("key_cache_on")
            return

    def _on_notice(self, _c: object, _pid: int, _channel: str, key_id: str) -> None:
        self._evict(key_id)

    def _evict(self, key_id: str) -> None:
        self._generation += 1
        for digest, (key, _) in list(self._entries.items()):
            if key.key_id == key_id:
                del self._entries[digest]

    def _forget_all(self) -> None:
        self._generation += 1
        self._entries.clear()

    async def find_by_digest(self, digest: str) -> ApiKey | None:
        now = self._monotonic()
        hit = self._entries.get(digest)
        if hit is not None and self.listening and now - hit[1] < self._max_age:
            return hit[0]
        generation = self._generation
        key = await self._inner.find_by_digest(digest)
        if key is not None and self.listening and generation == self._generation:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.clear()
            self._entries[digest] = (key, now)
        return key

    async def touch(self, key_id: str, now: datetime) -> None:
        await self._inner.touch(key_id, now)
        for digest, (key, cached_at) in list(self._entries.items()):
            if key.key_id == key_id:
                self._entries[digest] = (replace(key, last_used_at=now), cached_at)

    async def revoke(self, key_id: str, now: datetime) -> ApiKey | None:
        revoked = await self._inner.revoke(key_id, now)
        self._evict(key_id)  # ours at once; the other processes' by NOTIFY
        return revoked

    async def create_key(
        self, *, account_name: str, label: str, digest: str, prefix: str, now: datetime
    ) -> ApiKey:
        return await self._inner.create_key(
            account_name=account_name, label=label, digest=digest, prefix=prefix, now=now
        )

    async def list_keys(self, account_name: str | None = None) -> list[ApiKey]:
        return await self._inner.list_keys(account_name)

    async def count_keys(self) -> int:
        return await self._inner.count_keys()
