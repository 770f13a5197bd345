"""The watch every serving process keeps over background work that a runner outside any
job left behind (a command-line import or bulk action killed while the servers run): no
job exists for it, so the watch queues it again once it has not moved for a while."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from leadmail.ports.errors import StorageUnavailable

log = logging.getLogger("leadmail.resuming")
# What queues the work idle for that many seconds again (``resume_unfinished``).
Resume = Callable[[float], Awaitable[int]]


async def keep_resuming(
    resume: Resume, what: str, idle_for: float = 120.0, every: float = 60.0
) -> None:
    """Forever: ``resume(idle_for)`` every ``every`` seconds (``what`` names the work in
    the log when the store cannot be reached). Cancel it to stop."""
    while True:
        await asyncio.sleep(every)
        try:
            await resume(idle_for)
        except StorageUnavailable:
            log.warning("%s_not_checked_storage_unavailable", what)
