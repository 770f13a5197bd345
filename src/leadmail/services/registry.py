from __future__ import annotations

from dataclasses import dataclass

from leadmail.services.activity import AccountActivity
from leadmail.services.campaign_runner import CampaignRunner
from leadmail.services.campaigns import CampaignService
from leadmail.services.health import Health
from leadmail.services.keys import ApiKeyService
from leadmail.services.lead_actions import LeadActions
from leadmail.services.lead_export import LeadExport
from leadmail.services.lead_imports import LeadImportService
from leadmail.services.lead_timeline import LeadTimeline
from leadmail.services.leads import LeadService
from leadmail.services.messages import MessageService
from leadmail.services.operations import Operations
from leadmail.services.privacy import Privacy
from leadmail.services.provider_events import ProviderEventService
from leadmail.services.quotas import SendQuota
from leadmail.services.retention import Retention
from leadmail.services.send_email import SendEmail
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


@dataclass(frozen=True, slots=True)
class Services:
    """Every use case, wired to its adapters by the composition root."""

    leads: LeadService
    keys: ApiKeyService
    templates: TemplateService
    messages: MessageService
    send_email: SendEmail
    send_template_email: SendTemplateEmail
    imports: LeadImportService
    lead_actions: LeadActions  # bulk actions on segments (and their job)
    export: LeadExport
    campaigns: CampaignService
    suppressions: SuppressionList
    campaign_runner: CampaignRunner  # CAMPAIGN_JOB's handler
    sender_rules: SenderRules  # may an account use a from / reply_to: every send path asks
    sender_domains: SenderDomainService
    provider_events: ProviderEventService  # the providers' webhooks
    unsubscribes: Unsubscribes  # one-click unsubscribe links, and the unsubscribe itself
    privacy: Privacy  # a person's data exported or erased (GDPR articles 15 and 17)
    template_authoring: TemplateAuthoring  # an account's own templates written
    template_trials: TemplateTrials  # a template previewed, or sent to one address as a test
    lead_timeline: LeadTimeline  # what happened to one lead
    health: Health  # /ready: storage reachable, migrations applied, start-up done
    quota: SendQuota  # each account's daily send quota (every path that sends asks it)
    operations: Operations  # what GET /metrics reads from the storage
    retention: Retention  # old claims, messages, logs and import files purged
    activity: AccountActivity  # the dashboard overview's figures
    users: Users  # the dashboard's people: invited, their passwords set, disabled
    sign_in: SignIn  # the dashboard's sign-in and sessions
