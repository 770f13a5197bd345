"""A command's work on the database: the adapters opened, the services wired, no email
sent."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.services.registry import Services

T = TypeVar("T")


def with_services(
    settings: Settings, work: Callable[[Services], Awaitable[T]], *, create: bool = True
) -> T:
    """``work`` on the database (``create``: False when it only reads: a SQLite file that
    is not there is said so, not made); no email is sent."""

    async def run() -> T:
        adapters = Adapters.from_settings(settings, create=create, sending=False)
        async with adapters.opened(apply_migrations=settings.migrate_on_start):
            return await work(wire(adapters, settings))

    return asyncio.run(run())
