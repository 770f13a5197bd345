"""CampaignWatch.until: the work it waits on never outlives the wait."""

from __future__ import annotations

import asyncio

from leadmail.adapters.memory.campaigns import MemoryCampaignRepository
from leadmail.services.campaign_watch import CampaignWatch
from leadmail.services.outgoing import SystemTimer


def a_watch() -> CampaignWatch:
    """A watch of a campaign that keeps running (its status is not read within a test)."""
    return CampaignWatch(
        MemoryCampaignRepository(),
        "cmp_watched",
        interval=60,
        timer=SystemTimer(),
        stopping=asyncio.Event(),
    )


async def test_work_is_cancelled_with_the_task_that_waits_for_it() -> None:
    """A stopping server cancels the campaign's loop while it waits (for the pace, a
    retry's backoff): the work it waited on is cancelled too, not left running alone."""
    started, ended = asyncio.Event(), asyncio.Event()

    async def work() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            ended.set()

    watch = a_watch()
    waiting = asyncio.create_task(watch.until(work()))
    await asyncio.wait_for(started.wait(), timeout=5)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)

    await asyncio.wait_for(ended.wait(), timeout=1)
    assert waiting.cancelled()


async def test_work_that_ends_first_gives_its_result() -> None:
    async def work() -> str:
        return "done"

    watch = a_watch()
    assert await watch.until(work()) == (True, "done")
