"""A campaign's status as its runner sees it: read again at least every ``interval``
seconds by one task, so that a pause or a cancel made on any server stops this process's
new provider calls within that time; and every wait of the runner (the rate limiter, a
retry's backoff, other workers' batches) ends as soon as the campaign stops running or
the process is stopping."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from types import TracebackType
from typing import TypeVar

from leadmail.domain.campaigns import CampaignStatus
from leadmail.ports.campaigns import CampaignRepository
from leadmail.services.outgoing import Timer

T = TypeVar("T")
log = logging.getLogger("leadmail.campaigns")


class CampaignWatch:
    """``running`` until the stored campaign is anything but running, or ``stopping``
    (the process's own stop) is set. Use as ``async with``."""

    def __init__(
        self,
        campaigns: CampaignRepository,
        campaign_id: str,
        *,
        interval: float,
        timer: Timer,
        stopping: asyncio.Event,
    ) -> None:
        self._campaigns = campaigns
        self._campaign_id = campaign_id
        self._interval = interval
        self._timer = timer
        self._stopping = stopping
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return not self._stopped.is_set() and not self._stopping.is_set()

    async def __aenter__(self) -> CampaignWatch:
        self._task = asyncio.create_task(self._poll())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def check(self) -> bool:
        """Read the status now (before a retry); whether it still runs."""
        if self.running:
            await self._read()
        return self.running

    async def until(self, work: Awaitable[T]) -> tuple[bool, T | None]:
        """``work``'s result, or (False, None) when the campaign stopped first (``work``
        is then cancelled, as it is when the caller is)."""
        if not self.running:
            if asyncio.iscoroutine(work):
                work.close()
            return False, None
        task: asyncio.Future[T] = asyncio.ensure_future(work)
        stop: asyncio.Future[None] = asyncio.ensure_future(self._either_stop())
        try:
            await asyncio.wait((task, stop), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # this task cancelled: ``work`` goes with it, not on alone
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task.done():
            return True, task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return False, None

    async def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; False when the campaign stopped meanwhile."""
        done, _ = await self.until(self._timer.sleep(seconds))
        return done

    async def _either_stop(self) -> None:
        stops = [asyncio.ensure_future(e.wait()) for e in (self._stopped, self._stopping)]
        try:
            await asyncio.wait(stops, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for stop in stops:
                stop.cancel()

    async def _poll(self) -> None:
        while self.running:
            await self._timer.sleep(self._interval)
            try:
                await self._read()
            except Exception as e:  # the database is away: keep the last status
                log.warning("campaign_status_unread", extra={"error_type": type(e).__name__})

    async def _read(self) -> None:
        found = await self._campaigns.find(self._campaign_id)
        if found is None or found.status is not CampaignStatus.RUNNING:
            self._stopped.set()
