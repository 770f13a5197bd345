"""The campaign runner on the memory adapters and the recording provider, with a wall clock
that stands still (leases end only when a test moves it) and short real waits."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from leadmail.adapters.catalog.files import FileTemplateCatalog
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.domain.campaigns import CampaignStatus
from leadmail.domain.delivery import BatchItem, ItemResult, RetryPolicy
from leadmail.domain.email import Message
from leadmail.domain.leads import Lead, new_lead_id
from leadmail.domain.pacing import email_lane
from leadmail.ports.rate_limits import RateLimiter
from leadmail.services.campaign_batches import CampaignBatches, CampaignSettings
from leadmail.services.campaign_checks import CampaignRequest
from leadmail.services.campaign_runner import CampaignRunner
from leadmail.services.campaigns import CampaignService
from leadmail.services.outgoing import DeliverySettings, Outgoing
from leadmail.services.registry import Services
from leadmail.services.send_policy import SendPolicy
from tests.unit.fakes import START, FakeClock

ACCOUNT = "acc_school"
TEMPLATE = """---
id: hello
name: Hello
subject: Hi {{first_name}}, from {{school}}
---
<p>Dear {{name}}, see you in {{city}} at {{school}}.</p>
"""
OTHER = """---
id: other
name: Other
subject: Other
---
<p>Other</p>
"""


class RecordingLimiter(RateLimiter):
    """Counts acquires and holds, waiting for nothing (the real limiter's own tests hold
    its waiting); ``events`` interleaves them with the provider's requests."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.holds: list[tuple[str, float]] = []

    async def acquire(self, lane: str, cost: int = 1) -> None:
        self.events.append(f"acquire {lane}")

    async def unheld(self, lane: str) -> None:
        return None

    async def hold(self, lane: str, seconds: float) -> None:
        self.holds.append((lane, seconds))
        self.events.append(f"hold {lane} {seconds}")

    async def close(self) -> None:
        return None


class WatchedProvider(RecordingEmailProvider):
    """The recording provider that notes each request in ``events``, may wait ``delay``
    s inside it, and calls ``before`` (if set) as a request begins."""

    def __init__(self, events: list[str], **options: Any) -> None:
        super().__init__(**options)
        self.events = events
        self.delay = 0.0
        self.before: Callable[[Sequence[BatchItem]], Awaitable[None]] | None = None
        self.in_flight = 0
        self.most_in_flight = 0

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        self.events.append(f"request {len(items)}")
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.before is not None:
                await self.before(items)
            if self.delay:
                await asyncio.sleep(self.delay)
            return await super().send_batch(items, batch_key=batch_key)
        finally:
            self.in_flight -= 1


class WatchedMessages(MemoryMessageRepository):
    """The memory message log that notes each store of a batch's messages in ``events``."""

    def __init__(self, events: list[str]) -> None:
        super().__init__()
        self.events = events

    async def add(self, records: Sequence[Message]) -> None:
        self.events.append(f"store {len(records)}")
        await super().add(records)


@dataclass
class RunnerRig:
    adapters: Adapters
    services: Services
    provider: WatchedProvider
    limiter: RateLimiter
    runner: CampaignRunner
    clock: FakeClock
    catalog: Path
    events: list[str] = field(default_factory=list)

    @property
    def campaigns(self) -> CampaignService:
        return self.services.campaigns

    async def lead(self, email: str, name: str = "Ada Lovelace", **fields: Any) -> Lead:
        lead = Lead(new_lead_id(), ACCOUNT, name, email, "", "", "web", START, START,
                    tags=("march",), fields=fields)  # fmt: skip
        return await self.adapters.leads.add(lead)

    async def start(self, **changes: Any) -> str:
        given: dict[str, Any] = {
            "name": "March open day",
            "template_id": "hello",
            "audience": {"tag": "march"},
            "variables": {"school": "Northwind", "city": "Leeds"},
            **changes,
        }
        view = await self.campaigns.create(ACCOUNT, CampaignRequest(**given))
        return view.campaign.campaign_id

    async def run(self, campaign_id: str, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            await self.runner.run_job(campaign_id)

    async def status(self, campaign_id: str) -> CampaignStatus:
        return (await self.campaigns.get(ACCOUNT, campaign_id)).campaign.status


def campaign_settings(**changes: Any) -> CampaignSettings:
    quick = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01, deadline=5.0)
    given: dict[str, Any] = {"batch": 3, "in_flight": 1, "retry": quick, "poll": 0.01, **changes}
    return CampaignSettings(**given)


async def runner_rig(
    tmp_path: Path,
    *,
    limiter: RateLimiter | None = None,
    settings: CampaignSettings | None = None,
    **provider_options: Any,
) -> RunnerRig:
    events: list[str] = []
    catalog = tmp_path / "templates"
    catalog.mkdir(exist_ok=True)
    (catalog / "hello.html").write_text(TEMPLATE)
    (catalog / "other.html").write_text(OTHER)
    options = {"batch_limit": 3, **provider_options}
    provider = WatchedProvider(events, **options)
    chosen_limiter = limiter if limiter is not None else RecordingLimiter(events)
    adapters = dataclasses.replace(
        Adapters.in_memory(provider),
        catalog=FileTemplateCatalog(catalog),
        limiter=chosen_limiter,
        messages=WatchedMessages(events),
    )
    clock = FakeClock()
    services = wire(adapters, Settings(email_default_from="team@example.com"), clock)
    await services.templates.sync()
    parts = adapters
    chosen = settings if settings is not None else campaign_settings()
    outgoing = Outgoing(parts.messages, provider, DeliverySettings(retry=chosen.retry), clock)
    batches = CampaignBatches(
        parts.recipients, parts.leads, parts.messages, outgoing,
        SendPolicy(parts.suppressions, services.sender_rules), chosen_limiter,
        email_lane(provider.name), chosen, clock, services.unsubscribes, services.quota,
        services.campaigns.pause_for_quota,
    )  # fmt: skip
    runner = CampaignRunner(
        parts.campaigns, parts.recipients, services.templates, batches, chosen, clock,
        outgoing.timer, begin=services.campaigns.begin_when_due,
        retryable=provider.keeps_idempotency,
    )  # fmt: skip
    return RunnerRig(adapters, services, provider, chosen_limiter, runner, clock, catalog, events)


LEASE = timedelta(seconds=60)
