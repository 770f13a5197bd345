"""What an operator watches that only the storage knows (GET /metrics reads it at each
scrape, for every account): the recipients the running campaigns have still to send, and
the jobs waiting in the queue."""

from __future__ import annotations

from dataclasses import dataclass

from leadmail.domain.campaigns import CampaignStatus
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.ports.jobs import JobQueue


@dataclass(frozen=True, slots=True)
class OperationFigures:
    pending_recipients: int  # of running campaigns
    queued_jobs: int


class Operations:
    def __init__(
        self, campaigns: CampaignRepository, recipients: RecipientRepository, jobs: JobQueue
    ) -> None:
        self._campaigns = campaigns
        self._recipients = recipients
        self._jobs = jobs

    async def figures(self) -> OperationFigures:
        """Two or three queries: the active campaigns, their counts grouped, the queue."""
        running = [
            c.campaign_id
            for c in await self._campaigns.active()
            if c.status is CampaignStatus.RUNNING
        ]
        counts = await self._recipients.counts_of(running) if running else {}
        pending = sum(count.pending for count in counts.values())
        return OperationFigures(pending, await self._jobs.queued_count())
