"""The composition root: adapters from settings, services from adapters, the app from both."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from leadmail.adapters.catalog.files import FileTemplateCatalog
from leadmail.adapters.db.activity import PiccoloActivityCounts
from leadmail.adapters.db.campaign_recipients import PiccoloRecipientRepository
from leadmail.adapters.db.campaigns import PiccoloCampaignRepository
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.idempotency import PiccoloIdempotencyStore
from leadmail.adapters.db.installation_secrets import PiccoloInstallationSecrets
from leadmail.adapters.db.jobs import PgQueuerJobQueue
from leadmail.adapters.db.key_cache import APPLICATION_NAME as KEY_CACHE_CONNECTION
from leadmail.adapters.db.key_cache import CachedApiKeyStore
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.lead_actions import PiccoloLeadActionRepository
from leadmail.adapters.db.lead_events import PiccoloLeadEventRepository
from leadmail.adapters.db.lead_imports import PiccoloLeadImportRepository
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.message_events import PiccoloMessageEventRepository
from leadmail.adapters.db.messages import PiccoloMessageRepository
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.db.privacy import PiccoloPersonalData
from leadmail.adapters.db.quotas import PiccoloQuotaRepository
from leadmail.adapters.db.rate_limits import PostgresLimitStorage
from leadmail.adapters.db.readiness import DatabaseReadiness
from leadmail.adapters.db.retention import PiccoloRetentionStore
from leadmail.adapters.db.sender_domains import PiccoloSenderDomainRepository
from leadmail.adapters.db.suppressions import PiccoloSuppressionRepository
from leadmail.adapters.db.templates import (
    PiccoloAccountTemplateRepository,
    PiccoloTemplateRepository,
)
from leadmail.adapters.db.users import PiccoloUserStore
from leadmail.adapters.limits.factory import rate_limiter_for
from leadmail.adapters.limits.requests import request_limiter_from
from leadmail.adapters.mail.factory import email_provider_from
from leadmail.adapters.mail.metrics import MeteredEmailProvider
from leadmail.adapters.memory.account_templates import MemoryAccountTemplateRepository
from leadmail.adapters.memory.activity import MemoryActivityCounts
from leadmail.adapters.memory.campaigns import MemoryCampaignRepository, MemoryRecipientRepository
from leadmail.adapters.memory.idempotency import MemoryIdempotencyStore
from leadmail.adapters.memory.installation_secrets import MemoryInstallationSecrets
from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.lead_actions import MemoryLeadActionRepository
from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.privacy import MemoryPersonalData
from leadmail.adapters.memory.quotas import MemoryQuotaRepository
from leadmail.adapters.memory.retention import MemoryRetentionStore
from leadmail.adapters.memory.sender_domains import MemorySenderDomainRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.adapters.memory.templates import MemoryTemplateRepository
from leadmail.adapters.memory.users import MemoryUserStore
from leadmail.adapters.passwords.argon2 import Argon2PasswordHasher
from leadmail.campaign_wiring import campaign_runner
from leadmail.config import Settings
from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import RetryPolicy
from leadmail.domain.email import SenderPolicy
from leadmail.domain.retention import RetentionPolicy
from leadmail.domain.users import SIGN_IN_FAILURES_PER_MINUTE
from leadmail.ports.activity import ActivityCounts
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.ports.idempotency import IdempotencyStore
from leadmail.ports.installation_secrets import InstallationSecrets
from leadmail.ports.keys import ApiKeyStore
from leadmail.ports.lead_actions import LeadActionRepository
from leadmail.ports.lead_events import LeadEventRepository
from leadmail.ports.lead_imports import LeadImportRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.mail import EmailProvider
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.messages import MessageRepository
from leadmail.ports.passwords import PasswordHasher
from leadmail.ports.privacy import PersonalDataRepository
from leadmail.ports.quotas import QuotaRepository
from leadmail.ports.rate_limits import RateLimiter
from leadmail.ports.request_limits import RequestLimiter
from leadmail.ports.retention import RetentionStore
from leadmail.ports.sender_domains import SenderDomainRepository
from leadmail.ports.suppressions import SuppressionRepository
from leadmail.ports.templates import (
    AccountTemplateRepository,
    TemplateCatalog,
    TemplateRepository,
)
from leadmail.ports.users import UserStore
from leadmail.services.activity import AccountActivity
from leadmail.services.addressing import Addressing
from leadmail.services.campaign_checks import CampaignChecks
from leadmail.services.campaigns import CAMPAIGN_JOB, QUOTA_RESUME_JOB, CampaignService
from leadmail.services.health import Health
from leadmail.services.keys import ApiKeyService, CreatedKey
from leadmail.services.lead_actions import ACTION_JOB, LeadActions
from leadmail.services.lead_export import LeadExport
from leadmail.services.lead_imports import IMPORT_JOB, LeadImportService
from leadmail.services.lead_timeline import LeadTimeline
from leadmail.services.leads import LeadService
from leadmail.services.messages import MessageService
from leadmail.services.operations import Operations
from leadmail.services.outbox import Outbox
from leadmail.services.outgoing import DeliverySettings, Outgoing
from leadmail.services.privacy import Privacy
from leadmail.services.provider_events import ProviderEventService
from leadmail.services.quotas import SendQuota
from leadmail.services.registry import Services
from leadmail.services.retention import RETENTION_JOB, Retention
from leadmail.services.send_email import SendEmail
from leadmail.services.send_policy import SendPolicy
from leadmail.services.send_template_email import SendTemplateEmail
from leadmail.services.sender_domains import SenderDomainService
from leadmail.services.sender_rules import SenderRules
from leadmail.services.sign_in import SignIn
from leadmail.services.suppressions import SuppressionList
from leadmail.services.template_authoring import TemplateAuthoring
from leadmail.services.template_trials import TemplateTrials
from leadmail.services.templates import TemplateService
from leadmail.services.unsubscribes import Unsubscribes
from leadmail.services.users import Users

if TYPE_CHECKING:  # the web framework is imported by the commands that serve, not by all
    pass

DEMO_ACCOUNT = "demo"
log = structlog.get_logger("leadmail")


@dataclass
class Adapters:
    leads: LeadRepository
    keys: ApiKeyStore
    provider: EmailProvider
    templates: TemplateRepository
    account_templates: AccountTemplateRepository  # each account's own
    messages: MessageRepository
    claims: IdempotencyStore
    catalog: TemplateCatalog
    imports: LeadImportRepository
    jobs: InProcessJobQueue | PgQueuerJobQueue
    limiter: RateLimiter  # the provider's pace (campaigns), shared by every process
    campaigns: CampaignRepository
    recipients: RecipientRepository
    suppressions: SuppressionRepository
    sender_domains: SenderDomainRepository
    events: MessageEventRepository  # what the providers' webhooks said of messages
    personal_data: PersonalDataRepository  # every record naming an address (GDPR)
    lead_events: LeadEventRepository  # a lead's changes that leave no other trace
    lead_actions: LeadActionRepository  # bulk actions on segments
    retention: RetentionStore  # what is kept for a while, removed once its time is past
    users: UserStore  # the dashboard's people and their sessions
    passwords: PasswordHasher  # Argon2id
    # Failed dashboard sign-ins per address and client (in Redis when set, else here).
    sign_in_failures: RequestLimiter
    activity: ActivityCounts  # the overview's figures
    database: Database | None = None
    quotas: QuotaRepository = field(default_factory=MemoryQuotaRepository)  # daily sends
    # The unsubscribe links' key when LEADMAIL_SECRET_KEY is not set.
    secrets: InstallationSecrets = field(default_factory=MemoryInstallationSecrets)
    # Requests a minute per API key, and per client address on the public pages (None: no
    # limit; in Redis when LEADMAIL_REDIS_URL is set, else in this process).
    key_budget: RequestLimiter | None = None
    client_budget: RequestLimiter | None = None

    @classmethod
    def in_memory(cls, provider: EmailProvider | None = None) -> Adapters:
        leads, campaigns = MemoryLeadRepository(), MemoryCampaignRepository()
        keys = MemoryApiKeyStore()
        suppressions = MemorySuppressionRepository()
        messages = MemoryMessageRepository(suppressions)
        events = MemoryMessageEventRepository(messages)
        recipients = MemoryRecipientRepository(leads, campaigns)
        lead_events = MemoryLeadEventRepository(leads)
        imports = MemoryLeadImportRepository(leads, lead_events)
        claims = MemoryIdempotencyStore()
        lead_actions = MemoryLeadActionRepository(leads, lead_events)
        return cls(
            leads=leads,
            keys=keys,
            provider=provider if provider is not None else RecordingEmailProvider(),
            templates=MemoryTemplateRepository(),
            account_templates=MemoryAccountTemplateRepository(),
            messages=messages,
            claims=claims,
            catalog=FileTemplateCatalog(None),
            imports=imports,
            jobs=InProcessJobQueue(),
            limiter=rate_limiter_for(Settings()),  # in this process; every lane unlimited
            campaigns=campaigns,
            recipients=recipients,
            suppressions=suppressions,
            sender_domains=MemorySenderDomainRepository(),
            events=events,
            personal_data=MemoryPersonalData(
                leads, messages, events, campaigns, recipients, imports, suppressions
            ),
            lead_events=lead_events,
            lead_actions=lead_actions,
            retention=MemoryRetentionStore(
                claims, messages, events, recipients, imports, lead_actions
            ),
            users=MemoryUserStore(keys),
            # The cheapest Argon2id: tests sign in often, and measure nothing of it.
            passwords=Argon2PasswordHasher(time_cost=1, memory_kib=64),
            sign_in_failures=_sign_in_failures(""),
            activity=MemoryActivityCounts(leads, messages, suppressions),
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        serving: bool = False,
        create: bool = True,
        sending: bool = True,
    ) -> Adapters:
        """``serving``: for a long-running server (API keys cached on Postgres).
        ``create``: False for a command that only reads (a SQLite file that is not there
        is refused on opening, never made). ``sending``: False for a command that sends no
        email (it starts without the provider's settings)."""
        database = database_from(settings, create=create)
        postgres = database.kind == "postgres"
        keys: ApiKeyStore = PiccoloApiKeyStore(database)
        if serving and postgres and settings.key_cache_seconds > 0:
            keys = CachedApiKeyStore(
                keys,
                functools.partial(database.connect_dedicated, KEY_CACHE_CONNECTION),
                max_age=settings.key_cache_seconds,
            )
        # The provider's rate across every process: in Redis when set, else in Postgres.
        limits = PostgresLimitStorage(database) if postgres else None
        return cls(
            leads=PiccoloLeadRepository(database),
            keys=keys,
            provider=MeteredEmailProvider(email_provider_from(settings, sending=sending)),
            templates=PiccoloTemplateRepository(database),
            account_templates=PiccoloAccountTemplateRepository(database),
            messages=PiccoloMessageRepository(database),
            claims=PiccoloIdempotencyStore(database),
            suppressions=PiccoloSuppressionRepository(database),
            catalog=catalog_from(settings),
            imports=PiccoloLeadImportRepository(database),
            # Postgres: any server's worker takes a job; SQLite: one server, in process.
            jobs=PgQueuerJobQueue(database) if postgres else InProcessJobQueue(),
            limiter=rate_limiter_for(settings, limits),
            campaigns=PiccoloCampaignRepository(database),
            recipients=PiccoloRecipientRepository(database),
            sender_domains=PiccoloSenderDomainRepository(database),
            events=PiccoloMessageEventRepository(database),
            personal_data=PiccoloPersonalData(database),
            lead_events=PiccoloLeadEventRepository(database),
            lead_actions=PiccoloLeadActionRepository(database),
            retention=PiccoloRetentionStore(database),
            users=PiccoloUserStore(database),
            passwords=Argon2PasswordHasher(),
            sign_in_failures=_sign_in_failures(settings.redis_url),
            activity=PiccoloActivityCounts(database),
            database=database,
            quotas=PiccoloQuotaRepository(database),
            secrets=PiccoloInstallationSecrets(database),
            key_budget=request_limiter_from(settings.redis_url, settings.rate_limit, "key"),
            client_budget=request_limiter_from(
                settings.redis_url, settings.public_rate_limit, "client"
            ),
        )

    @contextlib.asynccontextmanager
    async def opened(self, *, apply_migrations: bool) -> AsyncIterator[Adapters]:
        try:
            if self.database is None:
                yield self
                return
            async with self.database.running():
                if apply_migrations:
                    await migrate(self.database)
                if isinstance(self.keys, CachedApiKeyStore):
                    await self.keys.start()
                try:
                    yield self
                finally:
                    if isinstance(self.keys, CachedApiKeyStore):
                        await self.keys.close()
        finally:
            await self.provider.close()
            await self.limiter.close()
            for budget in (self.key_budget, self.client_budget, self.sign_in_failures):
                if budget is not None:
                    await budget.close()


def _sign_in_failures(redis_url: str) -> RequestLimiter:
    limiter = request_limiter_from(redis_url, SIGN_IN_FAILURES_PER_MINUTE, "sign_in")
    assert limiter is not None  # (None only for a budget of 0)
    return limiter


def catalog_from(settings: Settings) -> FileTemplateCatalog:
    """The template catalog: LEADMAIL_TEMPLATES_DIR's folder, else the packaged one."""
    return FileTemplateCatalog(Path(settings.templates_dir) if settings.templates_dir else None)


def database_from(settings: Settings, *, create: bool = True) -> Database:
    """The database LEADMAIL_DATABASE_URL names, not yet started."""
    return Database.from_url(
        settings.database_url,
        pool_min=settings.db_pool_min,
        pool_max=settings.db_pool_max,
        connect_timeout=settings.db_connect_timeout,
        command_timeout=settings.db_command_timeout,
        create=create,
    )


def wire(adapters: Adapters, settings: Settings | None = None, clock: Clock = utc_now) -> Services:
    settings = settings if settings is not None else Settings()
    outgoing = Outgoing(
        adapters.messages,
        adapters.provider,
        DeliverySettings(
            retry=RetryPolicy(
                max_attempts=settings.email_max_attempts, deadline=settings.email_deadline
            ),
            concurrency=settings.email_concurrency,
        ),
        clock,
    )
    # Every send path and campaign creation ask this one object (its cache is per process).
    sender_rules = SenderRules(
        SenderPolicy(frozenset(settings.allowed_sender_domains)), adapters.sender_domains
    )
    policy = SendPolicy(adapters.suppressions, sender_rules)
    suppression_list = SuppressionList(adapters.suppressions, clock)
    unsubscribes = Unsubscribes(
        settings.link_base(),
        adapters.secrets,
        suppression_list,
        key=settings.secret_key.encode() if settings.secret_key else None,
        clock=clock,
    )
    quota = SendQuota(adapters.quotas, clock)
    outbox = Outbox(adapters.messages, adapters.claims, outgoing, policy, quota, clock)
    addressing = Addressing(settings.email_default_from)
    templates = TemplateService(
        adapters.catalog, adapters.templates, adapters.account_templates, clock
    )
    imports = LeadImportService(adapters.imports, adapters.jobs, clock)
    adapters.jobs.handle(IMPORT_JOB, imports.run_job)
    # Postgres: two batches at once (a core each); SQLite has one writer.
    postgres = adapters.database is not None and adapters.database.kind == "postgres"
    lead_actions = LeadActions(
        adapters.lead_actions, adapters.leads, adapters.jobs, clock, parallel=2 if postgres else 1
    )
    adapters.jobs.handle(ACTION_JOB, lead_actions.run_job)
    checks = CampaignChecks(templates, adapters.leads, addressing, sender_rules)
    campaigns = CampaignService(
        adapters.campaigns, adapters.recipients, checks, adapters.jobs, quota, clock
    )
    runner = campaign_runner(
        adapters, settings, outgoing, policy, templates, campaigns, clock, unsubscribes, quota
    )
    adapters.jobs.handle(CAMPAIGN_JOB, runner.run_job)
    adapters.jobs.handle(QUOTA_RESUME_JOB, campaigns.resume_after_quota)
    send_template = SendTemplateEmail(addressing, templates, outbox, unsubscribes)
    retention = Retention(adapters.retention, RetentionPolicy(settings.retention_days), clock)
    # The scheduled purge: by one worker of all those on the database, at each time.
    adapters.jobs.schedule(RETENTION_JOB, settings.retention_schedule, retention.run_job)
    return Services(
        leads=LeadService(adapters.leads, adapters.lead_events, clock),
        keys=ApiKeyService(adapters.keys, clock),
        templates=templates,
        messages=MessageService(adapters.messages, adapters.events),
        lead_timeline=LeadTimeline(
            adapters.leads,
            adapters.lead_events,
            adapters.messages,
            adapters.events,
            adapters.suppressions,
        ),
        send_email=SendEmail(addressing, outbox, unsubscribes),
        send_template_email=send_template,
        imports=imports,
        lead_actions=lead_actions,
        export=LeadExport(adapters.leads),
        campaigns=campaigns,
        suppressions=suppression_list,
        campaign_runner=runner,
        sender_rules=sender_rules,
        sender_domains=SenderDomainService(adapters.sender_domains, sender_rules, clock),
        provider_events=ProviderEventService(adapters.events, suppression_list, clock),
        unsubscribes=unsubscribes,
        privacy=Privacy(adapters.personal_data),
        template_authoring=TemplateAuthoring(
            templates, adapters.account_templates, adapters.campaigns.using, clock
        ),
        template_trials=TemplateTrials(templates, adapters.leads, unsubscribes, send_template),
        health=Health(None if adapters.database is None else DatabaseReadiness(adapters.database)),
        quota=quota,
        operations=Operations(adapters.campaigns, adapters.recipients, adapters.jobs),
        retention=retention,
        activity=AccountActivity(adapters.activity, adapters.leads, clock),
        users=Users(adapters.users, adapters.passwords, settings.link_base(), clock),
        sign_in=SignIn(
            adapters.users,
            adapters.passwords,
            adapters.sign_in_failures,
            adapters.secrets,
            key=settings.secret_key.encode() if settings.secret_key else None,
            clock=clock,
        ),
    )


async def ensure_demo_key(services: Services) -> CreatedKey | None:
    """On an empty embedded database, mint a key so a newcomer can try the API at once."""
    if await services.keys.any_key_exists():
        return None
    return await services.keys.create(DEMO_ACCOUNT, "created on first start")
