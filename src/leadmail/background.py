"""The background work of a serving process: its job worker started and stopped, and the
work a stopped server left behind queued again (imports, bulk actions, campaigns)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

import structlog

from leadmail.services.registry import Services

log = structlog.get_logger("leadmail")
# How long a stopping process waits for its campaign batches at the provider (a provider
# attempt is bounded by LEADMAIL_EMAIL_TIMEOUT, 10 s by default): within the 30 s a
# stopping worker has.
RUNNER_STOP_S = 25.0


class Worker(Protocol):
    """A job queue's worker (InProcessJobQueue, PgQueuerJobQueue)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@contextlib.asynccontextmanager
async def running_jobs(worker: Worker, services: Services, *, shared: bool) -> AsyncIterator[None]:
    """The job worker of this process, with the imports a stopped server left unfinished
    queued again (``shared``, on Postgres: only those idle a while, as pgqueuer itself
    retries a job whose worker stopped, and a CLI import may still be running), and from
    then on every minute those idle two minutes; and the jobs of the running and scheduled
    campaigns (a job still queued on Postgres is not doubled)."""
    resumed = await services.imports.resume_unfinished(idle_for=120.0 if shared else 0.0)
    if resumed:
        log.info("imports_resumed", imports=resumed)
    actions = await services.lead_actions.resume_unfinished(idle_for=120.0 if shared else 0.0)
    if actions:
        log.info("lead_actions_resumed", actions=actions)
    forgotten = await services.imports.forget_abandoned_uploads()
    if forgotten:
        log.info("abandoned_uploads_deleted", imports=forgotten)
    campaigns = await services.campaigns.requeue_active()
    if campaigns:
        log.info("campaigns_queued", campaigns=campaigns)
    await worker.start()
    watching = [
        asyncio.create_task(services.imports.keep_resuming()),
        asyncio.create_task(services.lead_actions.keep_resuming()),
    ]
    joining = asyncio.create_task(services.campaign_runner.keep_joining())
    try:
        yield
    finally:
        for watch in watching:
            watch.cancel()
        await asyncio.gather(*watching, return_exceptions=True)
        # Campaigns first: no new batch, and the batches at the provider answered and
        # recorded, before the queue's worker cancels what still runs.
        if not await services.campaign_runner.stop(RUNNER_STOP_S):
            log.warning("campaign_batches_unfinished", waited_s=RUNNER_STOP_S)
        joining.cancel()
        await asyncio.gather(joining, return_exceptions=True)
        await worker.stop()
