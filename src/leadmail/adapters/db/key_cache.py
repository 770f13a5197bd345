"""API keys served from memory, so a request costs no key query.

Correctness rests on Postgres LISTEN/NOTIFY: ``PiccoloApiKeyStore.revoke`` notifies on
``KEYS_CHANNEL`` (the CLI's revoke included, from any process), and every server evicts the key
at once. While the listening connection is down nothing is cached and every request reads
the database, as without this class. Entries also expire after ``max_age`` as a backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
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
RECONNECT_DELAY_S = 2.0

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
        self._closed = False

    @property
    def listening(self) -> bool:
        return self._connection is not None and not self._connection.is_closed()

    async def start(self) -> None:
        try:
            await self._listen()
        except (TimeoutError, OSError, asyncpg.PostgresError) as e:
            log.warning("key_cache_off", reason=type(e).__name__)
            self._schedule_reconnect()

    async def close(self) -> None:
        self._closed = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reconnecting
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self._connection.close()
        self._forget_all()

    async def _listen(self) -> None:
        connection = await self._connect()
        connection.add_termination_listener(self._on_lost)
        await connection.add_listener(KEYS_CHANNEL, self._on_notice)
        self._forget_all()  # whatever happened while we were deaf
        self._connection = connection

    def _on_lost(self, _: object) -> None:
        self._connection = None
        self._forget_all()
        log.warning("key_cache_off", reason="listener connection lost")
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
