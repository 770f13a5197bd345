"""The campaign runner put together from the adapters and settings (bootstrap.wire calls
this): how large its batches are, how many it keeps at the provider, its lease."""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from leadmail.config import Settings
from leadmail.domain.clock import Clock
from leadmail.domain.delivery import RetryPolicy
from leadmail.domain.pacing import email_lane
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.mail import EmailProvider
from leadmail.ports.messages import MessageRepository
from leadmail.ports.rate_limits import RateLimiter
from leadmail.services.campaign_batches import CampaignBatches, CampaignSettings
from leadmail.services.campaign_runner import CampaignRunner
from leadmail.services.campaigns import CampaignService
from leadmail.services.outgoing import Outgoing
from leadmail.services.quotas import SendQuota
from leadmail.services.send_policy import SendPolicy
from leadmail.services.templates import TemplateService
from leadmail.services.unsubscribes import Unsubscribes

# A campaign's batches at the provider at once, per process, where the provider takes
# batches (one message per request: LEADMAIL_EMAIL_CONCURRENCY of them). Two keep one
# batch at the provider while the other is claimed, rendered and recorded; more only
# made the process's other requests wait (bench/README.md, "Campaign throughput").
BATCHES_IN_FLIGHT = 2


class RunnerAdapters(Protocol):
    """The adapters the runner uses (bootstrap.Adapters has them)."""

    campaigns: CampaignRepository
    recipients: RecipientRepository
    leads: LeadRepository
    messages: MessageRepository
    provider: EmailProvider
    limiter: RateLimiter


def campaign_settings(settings: Settings, provider: EmailProvider) -> CampaignSettings:
    """Batches as large as the provider takes (or LEADMAIL_EMAIL_BATCH, if smaller)."""
    batch = min(settings.email_batch or provider.batch_limit, provider.batch_limit)
    return CampaignSettings(
        lease=timedelta(seconds=settings.campaign_lease_seconds),
        batch=batch,
        in_flight=settings.email_concurrency if batch == 1 else BATCHES_IN_FLIGHT,
        retry=RetryPolicy(
            max_attempts=settings.email_max_attempts, deadline=settings.email_deadline
        ),
    )


def campaign_runner(
    parts: RunnerAdapters,
    settings: Settings,
    outgoing: Outgoing,
    policy: SendPolicy,
    templates: TemplateService,
    campaigns: CampaignService,
    clock: Clock,
    links: Unsubscribes,
    quota: SendQuota,
) -> CampaignRunner:
    """CAMPAIGN_JOB's handler (services/campaign_runner.py), sending through ``outgoing``,
    the pipeline API sends take too."""
    provider = parts.provider
    chosen = campaign_settings(settings, provider)
    batches = CampaignBatches(
        parts.recipients, parts.leads, parts.messages, outgoing, policy, parts.limiter,
        email_lane(provider.name), chosen, clock, links, quota, campaigns.pause_for_quota,
    )  # fmt: skip
    return CampaignRunner(
        parts.campaigns, parts.recipients, templates, batches, chosen, clock, outgoing.timer,
        begin=campaigns.begin_when_due, retryable=provider.keeps_idempotency,
    )  # fmt: skip
