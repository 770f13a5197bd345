"""Piccolo tables: the one description of each table.

Migrations are generated from these classes, and every statement the adapters run is
derived from them (statements.py). Tables are built per engine by ``build_tables``
instead of being bound globally, so two databases (say SQLite and Postgres in one test
run) never share a binding. The module-level classes below are the ones Piccolo's
migration tooling reads, and the ones statements are derived from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from piccolo.columns import (
    JSONB,
    Array,
    BigInt,
    BigSerial,
    Boolean,
    Bytea,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.columns.base import OnDelete
from piccolo.engine.base import Engine
from piccolo.table import Table


@dataclass(frozen=True, slots=True)
class Tables:
    # Any: the classes are made at run time, so no static type can name their columns.
    accounts: Any
    account_sends: Any
    api_keys: Any
    leads: Any
    templates: Any
    messages: Any
    idempotency_keys: Any
    lead_imports: Any
    lead_import_chunks: Any
    lead_import_errors: Any
    campaigns: Any
    campaign_recipients: Any
    suppressions: Any
    sender_domains: Any
    message_events: Any
    installation_secrets: Any
    account_templates: Any
    template_versions: Any
    message_addresses: Any
    lead_events: Any
    lead_actions: Any
    lead_action_members: Any
    users: Any
    user_sessions: Any
    activity_counts: Any


def build_tables(engine: Engine[Any] | None) -> Tables:
    class Accounts(Table, tablename="accounts", db=engine):
        account_id = Varchar(length=40, primary_key=True)
        name = Varchar(length=64, unique=True)
        created_at = Timestamptz()
        daily_quota = Integer(default=0)  # messages a UTC day; 0: no quota

    class AccountSends(Table, tablename="account_sends", db=engine):
        # One row per account and UTC day: the messages counted against its quota.
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        day = Varchar(length=10)  # YYYY-MM-DD
        sent = Integer(default=0)

    class ApiKeys(Table, tablename="api_keys", db=engine):
        key_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(
            references=Accounts, on_delete=OnDelete.cascade, null=False, index=True
        )
        label = Varchar(length=200)
        prefix = Varchar(length=20)
        digest = Varchar(length=64, unique=True)
        created_at = Timestamptz()
        last_used_at = Timestamptz(null=True, default=None)
        revoked_at = Timestamptz(null=True, default=None)

    class Leads(Table, tablename="leads", db=engine):
        lead_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        name = Varchar(length=200)
        email = Varchar(length=254)
        # The email as compared for uniqueness (lower-cased); unique per account via an
        # index the migration creates.
        email_key = Varchar(length=254)
        source = Varchar(length=100)
        note = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()
        phone = Varchar(length=32)  # as the client typed it; "" when there is none
        # Lower-case, unique, sorted (domain/tags.py); a text[] (GIN-indexed) on Postgres,
        # a JSON array on SQLite.
        tags = Array(base_column=Text())
        # Custom fields (domain/custom_fields.py): jsonb on Postgres, JSON text on SQLite.
        fields = JSONB()

    class Templates(Table, tablename="templates", db=engine):
        template_id = Varchar(length=64, primary_key=True)
        # The catalog's files bound the id and subject, not the name: Text, so a long name
        # cannot pass on SQLite and fail on Postgres.
        name = Text()
        subject = Varchar(length=1000)
        body = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()
        version = Integer(default=1)  # the current version (template_versions holds each)

    class AccountTemplates(Table, tablename="account_templates", db=engine):
        # An account's own templates and layouts, each at its current version: (account_id,
        # template_id) is unique through an index the migration creates.
        account_template_id = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        template_id = Varchar(length=64)
        kind = Varchar(length=16)
        version = Integer()
        name = Text()
        subject = Varchar(length=1000)
        body = Text()
        text = Text(null=True, default=None)
        layout_id = Varchar(length=64, null=True, default=None)
        inline_css = Boolean(default=True)
        created_at = Timestamptz()
        updated_at = Timestamptz()

    class TemplateVersions(Table, tablename="template_versions", db=engine):
        # Every version of every template: an account's (account_id set) or a predefined
        # one (account_id NULL); (COALESCE(account_id, ''), template_id, version) is unique
        # through an index the migration creates.
        template_version_id = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=True)
        template_id = Varchar(length=64)
        kind = Varchar(length=16)
        version = Integer()
        name = Text()
        subject = Varchar(length=1000)
        body = Text()
        text = Text(null=True, default=None)
        layout_id = Varchar(length=64, null=True, default=None)
        inline_css = Boolean(default=True)
        created_at = Timestamptz()
        updated_at = Timestamptz()

    class Messages(Table, tablename="messages", db=engine):
        message_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        sender = Text()  # formatted: '"Name" <address>'
        recipients = Text()  # a JSON array of formatted addresses
        subject = Varchar(length=1000)
        # No foreign key: a template may leave the catalog while its messages stay logged.
        template_id = Varchar(length=64, null=True, default=None)
        template_version = Integer(null=True, default=None)  # None: a plain send
        test = Boolean(default=False)  # a template's test send
        # The campaign it was sent for (no foreign key: a campaign's messages outlive it).
        campaign_id = Varchar(length=40, null=True, default=None)
        status = Varchar(length=16)
        provider = Varchar(length=32)
        # Text, not a bounded Varchar: the id is the provider's to choose, and an id too long
        # for its column would fail the record of a message already sent (issue 28).
        provider_message_id = Text(null=True, default=None)
        attempts = Integer()
        last_error = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()

    class IdempotencyKeys(Table, tablename="idempotency_keys", db=engine):
        # A surrogate key, because Piccolo needs one primary-key column; what identifies a
        # claim is (account_id, key), unique through an index the migration creates.
        claim_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        key = Varchar(length=256)
        fingerprint = Varchar(length=64)
        token = Varchar(length=64)
        state = Varchar(length=16)
        message_ids = Text()  # a JSON array of message ids
        created_at = Timestamptz()
        updated_at = Timestamptz()

    class LeadImports(Table, tablename="lead_imports", db=engine):
        import_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(
            references=Accounts, on_delete=OnDelete.cascade, null=False, index=True
        )
        mode = Varchar(length=16)
        tags = Array(base_column=Text())  # added to every imported lead
        status = Varchar(length=16)
        size = BigInt()  # bytes of the file
        total = Integer(null=True, default=None)  # data rows, once counted
        rows_done = Integer()  # data rows processed: where a resumed import starts
        created = Integer()
        updated = Integer()
        skipped = Integer()
        failed = Integer()
        runner = Varchar(length=40)  # who runs it: only its batches are written
        attempts = Integer()  # runners that took it since its last batch was written
        error = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()
        started_at = Timestamptz(null=True, default=None)
        finished_at = Timestamptz(null=True, default=None)

    class LeadImportChunks(Table, tablename="lead_import_chunks", db=engine):
        # The file, stored in the database so that any server can run the import;
        # (import_id, number) is unique through an index the migration creates.
        import_id = ForeignKey(references=LeadImports, on_delete=OnDelete.cascade, null=False)
        number = Integer()
        data = Bytea()

    class LeadImportErrors(Table, tablename="lead_import_errors", db=engine):
        # One per row not imported; (import_id, row_number) unique through an index.
        import_id = ForeignKey(references=LeadImports, on_delete=OnDelete.cascade, null=False)
        row_number = Integer()
        field = Text()
        message = Text()
        # The row's email cell (domain RowError.email); its digest once erased.
        email = Varchar(length=254, default="")

    class Campaigns(Table, tablename="campaigns", db=engine):
        campaign_id = Varchar(length=40, primary_key=True)
        # Listed per account through an index the migration creates.
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        name = Varchar(length=200)
        # No foreign key: a template may leave the catalog (the campaign then fails).
        template_id = Varchar(length=64)
        audience = JSONB()  # the segment, as LeadFilter.to_json writes it
        variables = JSONB()  # shared values, text by name
        sender = Text()  # formatted: '"Name" <address>'
        reply_to = Text(null=True, default=None)
        send_at = Timestamptz(null=True, default=None)
        status = Varchar(length=16, index=True)
        failure_reason = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()
        started_at = Timestamptz(null=True, default=None)
        finished_at = Timestamptz(null=True, default=None)
        # The versions frozen when it started (None: a draft, or started before versions).
        template_version = Integer(null=True, default=None)
        layout_id = Varchar(length=64, null=True, default=None)
        layout_version = Integer(null=True, default=None)
        paused_reason = Varchar(length=16, default="")  # "manual", "quota" or ""

    class CampaignRecipients(Table, tablename="campaign_recipients", db=engine):
        # One per lead of a campaign's frozen audience: (campaign_id, lead_id) is unique
        # through an index the migration creates, and (campaign_id, status, lead_id)
        # indexed for leases, counts and pages by status.
        recipient_id = BigSerial(primary_key=True)
        campaign_id = ForeignKey(references=Campaigns, on_delete=OnDelete.cascade, null=False)
        # No foreign keys: a lead deleted after the freeze stays a recipient, and a
        # message id is given before its message is written.
        lead_id = Varchar(length=40)
        email = Varchar(length=254)
        status = Varchar(length=16)
        message_id = Varchar(length=40, null=True, default=None)
        batch_id = Varchar(length=40, null=True, default=None)
        lease_id = Varchar(length=40, null=True, default=None)  # who holds the batch now
        retry = Boolean()  # its batch expired, to be leased again as it was
        lease_until = Timestamptz(null=True, default=None)
        error = Text()
        updated_at = Timestamptz()

    class Suppressions(Table, tablename="suppressions", db=engine):
        # One per address and account: (account_id, digest) is unique through an index the
        # migration creates, as is the newest-first listing (account_id, created_at, digest),
        # and a later one the listing of one reason (account_id, reason, created_at, digest).
        suppression_id = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        digest = Varchar(length=71)  # domain/suppressions.address_digest
        email = Varchar(length=254)  # the address, or its digest once erased
        reason = Varchar(length=16)
        created_at = Timestamptz()
        # No foreign keys: where it came from stays named when that is gone.
        message_id = Varchar(length=40, null=True, default=None)
        campaign_id = Varchar(length=40, null=True, default=None)

    class SenderDomains(Table, tablename="sender_domains", db=engine):
        # A surrogate key, because Piccolo needs one primary-key column; what identifies a
        # sender domain is (account_id, domain), unique through an index the migration
        # creates (the only index: an account's domains are read by it).
        sender_domain_id = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        domain = Varchar(length=253)  # domain/sender_domains.check_domain's form
        created_at = Timestamptz()

    class MessageEvents(Table, tablename="message_events", db=engine):
        # What a provider's webhook said of a message (domain/message_events.py): one row
        # per (provider, event_id), unique through an index the migration creates, and
        # read by message in order of ``at`` through another.
        event_row = BigSerial(primary_key=True)
        message_id = ForeignKey(references=Messages, on_delete=OnDelete.cascade, null=False)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        provider = Varchar(length=32)
        event_id = Text()  # the provider's id of the event (domain: MAX_EVENT_ID)
        type = Varchar(length=16)
        bounce = Varchar(length=8, null=True, default=None)  # "hard" | "soft" for a bounce
        at = Timestamptz()
        detail = Text()

    class MessageAddresses(Table, tablename="message_addresses", db=engine):
        # One per address a message went to, as domain/addresses.email_key has it: the
        # message log's `to` filter and a lead's messages, newest first, through the index
        # (account_id, address, created_at, message_id) the migration creates. Written
        # with its message, in one statement or transaction (adapters/db/messages.py).
        # No foreign key to the message: one would need an index on message_id for its
        # cascade, an entry more on every send.
        address_row = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        address = Varchar(length=254)
        created_at = Timestamptz()
        message_id = Varchar(length=40)

    class LeadEvents(Table, tablename="lead_events", db=engine):
        # The changes of a lead that leave no other trace (domain/lead_timeline.py), read
        # by lead, newest first, through the index (lead_id, at, event_id) the migration
        # creates, which the cascade of a lead's deletion uses too.
        event_id = BigSerial(primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        lead_id = ForeignKey(references=Leads, on_delete=OnDelete.cascade, null=False)
        kind = Varchar(length=16)
        at = Timestamptz()
        detail = JSONB()

    class LeadActions(Table, tablename="lead_actions", db=engine):
        # A bulk action on a segment (domain/lead_actions.py); read by id.
        action_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(
            references=Accounts, on_delete=OnDelete.cascade, null=False, index=True
        )
        kind = Varchar(length=16)
        tags = Array(base_column=Text())  # added or removed (none for a delete)
        segment = JSONB()  # the segment, as LeadFilter.to_json writes it
        status = Varchar(length=16)
        total = Integer(null=True, default=None)  # leads frozen, once frozen
        done = Integer()  # leads worked through: where a resumed run starts
        changed = Integer()
        skipped = Integer()
        failed = Integer()
        runner = Varchar(length=40)  # who runs it: only its batches are written
        attempts = Integer()  # runners that took it since its last batch was written
        error = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()
        started_at = Timestamptz(null=True, default=None)
        finished_at = Timestamptz(null=True, default=None)

    class LeadActionMembers(Table, tablename="lead_action_members", db=engine):
        # The leads an action froze, oldest first, a batch of ids a row: chunk k holds
        # positions k * (the batch size) + 1 on ((action_id, chunk) unique through an
        # index the migration creates), and ``applied`` says the batch was applied (once:
        # it is set in the batch's own statement). One row per batch, not per lead: the
        # freeze writes a row for every 5,000 leads. No foreign key to the leads: one
        # deleted meanwhile is skipped.
        action_id = ForeignKey(references=LeadActions, on_delete=OnDelete.cascade, null=False)
        chunk = Integer()
        lead_ids = Array(base_column=Text())
        applied = Boolean(default=False)

    class InstallationSecrets(Table, tablename="installation_secrets", db=engine):
        # The installation's own secrets by name (the unsubscribe links' signing key, made
        # on first start when LEADMAIL_SECRET_KEY is not set): one row each, never changed.
        name = Varchar(length=64, primary_key=True)
        value = Text()
        created_at = Timestamptz()

    class Users(Table, tablename="users", db=engine):
        # The dashboard's people: each of one account. ``email_key`` (lower-cased) is
        # unique across the installation: an address signs in to one account.
        user_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(
            references=Accounts, on_delete=OnDelete.cascade, null=False, index=True
        )
        email = Varchar(length=254)
        email_key = Varchar(length=254, unique=True)
        password_hash = Text(null=True, default=None)  # Argon2id; None until set
        # The one-time password link's SHA-256 digest, until used or replaced.
        link_digest = Varchar(length=64, null=True, default=None, unique=True)
        link_expires_at = Timestamptz(null=True, default=None)
        created_at = Timestamptz()
        password_set_at = Timestamptz(null=True, default=None)
        disabled_at = Timestamptz(null=True, default=None)

    class UserSessions(Table, tablename="user_sessions", db=engine):
        # A signed-in browser: the SHA-256 digest of its cookie's secret.
        digest = Varchar(length=64, primary_key=True)
        user_id = ForeignKey(references=Users, on_delete=OnDelete.cascade, null=False, index=True)
        created_at = Timestamptz()
        last_seen_at = Timestamptz()

    class ActivityCounts(Table, tablename="activity_counts", db=engine):
        # What the dashboard's overview draws, counted as rows are written, by the
        # triggers of migration 2026-11-28T01:30:00 (no adapter writes here): an account's
        # leads by the UTC day they were made ("" for all days: its total), and its
        # messages by the day they were made and their status. Each writer adds to a row of
        # its own ``slot`` (on Postgres, its connection's: no two writers wait for one
        # row), and a read sums the slots. Unique on (account_id, kind, day, slot).
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        kind = Varchar(length=16)  # "lead", or a message status
        day = Varchar(length=10)  # YYYY-MM-DD, or "" (a lead total)
        slot = Integer()
        n = BigInt()

    return Tables(
        accounts=Accounts,
        account_sends=AccountSends,
        api_keys=ApiKeys,
        leads=Leads,
        templates=Templates,
        messages=Messages,
        idempotency_keys=IdempotencyKeys,
        lead_imports=LeadImports,
        lead_import_chunks=LeadImportChunks,
        lead_import_errors=LeadImportErrors,
        campaigns=Campaigns,
        campaign_recipients=CampaignRecipients,
        suppressions=Suppressions,
        sender_domains=SenderDomains,
        message_events=MessageEvents,
        installation_secrets=InstallationSecrets,
        account_templates=AccountTemplates,
        template_versions=TemplateVersions,
        message_addresses=MessageAddresses,
        lead_events=LeadEvents,
        lead_actions=LeadActions,
        lead_action_members=LeadActionMembers,
        users=Users,
        user_sessions=UserSessions,
        activity_counts=ActivityCounts,
    )


_MIGRATION_TABLES = build_tables(None)
Accounts = _MIGRATION_TABLES.accounts
AccountSends = _MIGRATION_TABLES.account_sends
ApiKeys = _MIGRATION_TABLES.api_keys
Leads = _MIGRATION_TABLES.leads
Templates = _MIGRATION_TABLES.templates
Messages = _MIGRATION_TABLES.messages
IdempotencyKeys = _MIGRATION_TABLES.idempotency_keys
LeadImports = _MIGRATION_TABLES.lead_imports
LeadImportChunks = _MIGRATION_TABLES.lead_import_chunks
LeadImportErrors = _MIGRATION_TABLES.lead_import_errors
Campaigns = _MIGRATION_TABLES.campaigns
CampaignRecipients = _MIGRATION_TABLES.campaign_recipients
Suppressions = _MIGRATION_TABLES.suppressions
SenderDomains = _MIGRATION_TABLES.sender_domains
MessageEvents = _MIGRATION_TABLES.message_events
InstallationSecrets = _MIGRATION_TABLES.installation_secrets
AccountTemplates = _MIGRATION_TABLES.account_templates
TemplateVersions = _MIGRATION_TABLES.template_versions
MessageAddresses = _MIGRATION_TABLES.message_addresses
LeadEvents = _MIGRATION_TABLES.lead_events
LeadActions = _MIGRATION_TABLES.lead_actions
LeadActionMembers = _MIGRATION_TABLES.lead_action_members
Users = _MIGRATION_TABLES.users
UserSessions = _MIGRATION_TABLES.user_sessions
ActivityCounts = _MIGRATION_TABLES.activity_counts
