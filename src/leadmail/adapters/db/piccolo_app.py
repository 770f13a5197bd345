"""The Piccolo app that owns leadmail's migrations."""

from __future__ import annotations

import os

from piccolo.conf.apps import AppConfig

from leadmail.adapters.db.tables import (
    Accounts,
    AccountSends,
    AccountTemplates,
    ActivityCounts,
    ApiKeys,
    CampaignRecipients,
    Campaigns,
    IdempotencyKeys,
    InstallationSecrets,
    LeadActionMembers,
    LeadActions,
    LeadEvents,
    LeadImportChunks,
    LeadImportErrors,
    LeadImports,
    Leads,
    MessageAddresses,
    MessageEvents,
    Messages,
    SenderDomains,
    Suppressions,
    Templates,
    TemplateVersions,
    Users,
    UserSessions,
)

APP_CONFIG = AppConfig(
    app_name="leadmail",
    migrations_folder_path=os.path.join(os.path.dirname(__file__), "migrations"),
    table_classes=[
        Accounts,
        AccountSends,
        ApiKeys,
        Leads,
        Templates,
        Messages,
        MessageAddresses,
        LeadEvents,
        LeadActions,
        LeadActionMembers,
        IdempotencyKeys,
        LeadImports,
        LeadImportChunks,
        LeadImportErrors,
        Campaigns,
        CampaignRecipients,
        Suppressions,
        SenderDomains,
        MessageEvents,
        InstallationSecrets,
        AccountTemplates,
        TemplateVersions,
        Users,
        UserSessions,
        ActivityCounts,
    ],
    migration_dependencies=[],
    commands=[],
)
