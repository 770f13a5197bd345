"""Is this process ready to serve: its storage answers, its migrations are applied, and
its start-up work is done (/ready). A process that started on a database lacking
migrations (LEADMAIL_MIGRATE_ON_START=false) serves /health and /ready, and nothing else,
until they are applied; then it finishes its start-up by itself."""

from __future__ import annotations

import asyncio

from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.readiness import ReadinessProbe

STARTING = "The service is starting"


class Health:
    def __init__(self, probe: ReadinessProbe | None) -> None:
        """``probe``: None for storage that is always there (the memory adapters)."""
        self._probe = probe
        self.started = False  # the start-up work done: the API is served

    def mark_started(self) -> None:
        self.started = True

    def check_started(self) -> None:
        """Every API request asks first: before the start-up work is done (the database's
        migrations not applied yet) no request reaches a table that may not be there."""
        if not self.started:
            raise StorageUnavailable(
                "The service is not ready: its database's migrations are not applied yet"
                " (GET /ready says why)"
            )

    async def storage_not_ready(self) -> str | None:
        """Why the storage is not ready, or None (ReadinessProbe.not_ready)."""
        return None if self._probe is None else await self._probe.not_ready()

    async def not_ready(self) -> str | None:
        """Why /ready fails now, or None: the storage first (it can go away after the
        start), then the start-up work."""
        reason = await self.storage_not_ready()
        if reason is None and not self.started:
            return STARTING
        return reason

    async def wait_for_storage(self, every: float = 1.0) -> None:
        """Back once the storage is ready (asked every ``every`` seconds)."""
        while True:  # nothing announces a migration: asked again, until it is applied
            if await self.storage_not_ready() is None:
                return
            await asyncio.sleep(every)
