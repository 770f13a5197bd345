"""Migrations forwards, again, back and forwards again, on a fresh SQLite file and a fresh
Postgres database."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import NamedTuple

import asyncpg
import pytest

from leadmail.adapters.db.connect import sqlite_path
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import is_unique_violation
from leadmail.adapters.db.idempotency import PiccoloIdempotencyStore
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.messages import PiccoloMessageRepository
from leadmail.adapters.db.migrate import applied_migrations, migrate, rollback_all
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t00_59_20_088300_initial as initial,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t01_05_00_000000_lead_indexes as lead_indexes,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t01_27_10_444501_mail_tables as mail_tables,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t01_28_00_000000_mail_indexes as mail_indexes,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t07_53_01_537882_messages_and_phone as messages_and_phone,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t07_54_00_000000_messages_and_phone_indexes as messages_and_phone_indexes,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t11_30_00_000000_messages_index_dropped as messages_index_dropped,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t12_12_02_738532_lead_tags_and_fields as tags_and_fields,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t12_13_00_000000_lead_tags_index as tags_index,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t12_48_42_134027_lead_imports as lead_imports,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t12_49_00_000000_lead_import_indexes as lead_import_indexes,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t12_50_00_000000_job_queue as job_queue,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_24t14_35_55_979221_campaigns as campaigns,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t16_35_31_104860_lead_import_attempts as import_attempts,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t16_40_00_000000_rate_limits as rate_limits,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t20_07_45_583691_suppressions as suppressions,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t20_10_00_000000_recipient_leases as recipient_leases,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t20_11_36_728110_sender_domains as sender_domains,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t20_13_31_053172_message_events as message_events,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t20_41_00_000000_suppressions_by_reason as suppressions_by_reason,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t21_11_37_112920_installation_secrets as installation_secrets,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_26t22_51_10_148594_import_error_emails as import_error_emails,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t02_24_14_378088_account_templates as account_templates,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t06_23_53_433070_message_log as message_log,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t07_45_00_000000_imports_listing as imports_listing,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t09_40_00_000000_lead_search_index as lead_search_index,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t09_50_00_000000_lead_events as lead_events,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t12_40_00_000000_lead_actions as lead_actions,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t15_59_46_758466_provider_id_text as provider_id_text,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t16_05_34_701009_daily_quotas as daily_quotas,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t19_00_00_000000_retention_indexes as retention_indexes,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_27t22_09_00_101884_dashboard_users as dashboard_users,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_28t01_28_49_099534_activity_counts as activity_counts,
)
from leadmail.adapters.db.sender_domains import PiccoloSenderDomainRepository
from leadmail.adapters.db.templates import PiccoloTemplateRepository
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.message_listing import MessageQuery
from leadmail.domain.templates import TemplateSource
from leadmail.ports.errors import DuplicateLead
from tests.contract.support import T0, a_claim, a_lead, a_message, new_account_key
from tests.postgres import fresh_database

LEAD_MIGRATIONS = sorted([initial.ID, lead_indexes.ID])
# A lead's tags and custom fields, and the GIN index on tags (Postgres only).
TAG_MIGRATIONS = sorted([tags_and_fields.ID, tags_index.ID])
# Lead imports (their tables, indexes) and the job queue (pgqueuer's tables, Postgres only).
IMPORT_MIGRATIONS = sorted([lead_imports.ID, lead_import_indexes.ID, job_queue.ID])
# Campaigns and their recipients (tables and indexes in one migration; a column renamed).
CAMPAIGN_MIGRATIONS = [campaigns.ID, recipient_leases.ID]
# A lead import's attempts (a column); its error rows' email cells (a column).
ATTEMPT_MIGRATIONS = [import_attempts.ID, import_error_emails.ID]
# The rate limiter's grants and holds (Postgres only: SQLite records it and does nothing).
LIMITER_MIGRATIONS = [rate_limits.ID]
# An account's sender domains (the table and its unique index, in one migration).
SENDER_MIGRATIONS = [sender_domains.ID]
# An account's suppression list (the table and its indexes; the listing of one reason).
SUPPRESSION_MIGRATIONS = [suppressions.ID, suppressions_by_reason.ID]
# The providers' events of messages (a table, its indexes, messages by provider id).
EVENT_MIGRATIONS = [message_events.ID]
# The installation's own secrets (the unsubscribe links' key when none is configured).
SECRET_MIGRATIONS = [installation_secrets.ID]
# Accounts' own templates and every template's versions (tables, indexes, version 1 rows).
TEMPLATE_MIGRATIONS = [account_templates.ID]
# The message log listed: messages' campaign, their addresses (a table), their indexes;
# then the imports' listing index.
LOG_MIGRATIONS = [message_log.ID, imports_listing.ID]
# The trigram index of a lead search (Postgres only, with pg_trgm).
SEARCH_MIGRATIONS = [lead_search_index.ID]
# A lead's events for its timeline (a table and its index).
TIMELINE_MIGRATIONS = [lead_events.ID]
# Bulk actions on segments (two tables and their indexes).
ACTION_MIGRATIONS = [lead_actions.ID]
# A message's provider id as text, any length (Postgres only: SQLite enforces none).
PROVIDER_ID_MIGRATIONS = [provider_id_text.ID]
# Daily send quotas (issue 28).
QUOTA_MIGRATIONS = [daily_quotas.ID]
# What a purge finds its rows by (issue 28): claims by age, recipients by message.
RETENTION_MIGRATIONS = [retention_indexes.ID]
# The dashboard's users and their sessions (issue 29).
USER_MIGRATIONS = [dashboard_users.ID]
# The overview's counts, kept by triggers (issue 29).
ACTIVITY_MIGRATIONS = [activity_counts.ID]
# From the mail tables on: messages, templates, claims and what came after them.
MAIL_MIGRATIONS = sorted(
    [
        mail_tables.ID,
        mail_indexes.ID,
        messages_and_phone.ID,
        messages_and_phone_indexes.ID,
        messages_index_dropped.ID,
        *TAG_MIGRATIONS,
        *IMPORT_MIGRATIONS,
        *CAMPAIGN_MIGRATIONS,
        *ATTEMPT_MIGRATIONS,
        *LIMITER_MIGRATIONS,
        *SENDER_MIGRATIONS,
        *SUPPRESSION_MIGRATIONS,
        *EVENT_MIGRATIONS,
        *SECRET_MIGRATIONS,
        *TEMPLATE_MIGRATIONS,
        *LOG_MIGRATIONS,
        *SEARCH_MIGRATIONS,
        *TIMELINE_MIGRATIONS,
        *ACTION_MIGRATIONS,
        *PROVIDER_ID_MIGRATIONS,
        *QUOTA_MIGRATIONS,
        *RETENTION_MIGRATIONS,
        *USER_MIGRATIONS,
        *ACTIVITY_MIGRATIONS,
    ]
)
# From the rename of email_messages on (and what came after).
RENAME_MIGRATIONS = sorted(
    [
        messages_and_phone.ID,
        messages_and_phone_indexes.ID,
        messages_index_dropped.ID,
        *TAG_MIGRATIONS,
        *IMPORT_MIGRATIONS,
        *CAMPAIGN_MIGRATIONS,
        *ATTEMPT_MIGRATIONS,
        *LIMITER_MIGRATIONS,
        *SENDER_MIGRATIONS,
        *SUPPRESSION_MIGRATIONS,
        *EVENT_MIGRATIONS,
        *SECRET_MIGRATIONS,
        *TEMPLATE_MIGRATIONS,
        *LOG_MIGRATIONS,
        *SEARCH_MIGRATIONS,
        *TIMELINE_MIGRATIONS,
        *ACTION_MIGRATIONS,
        *PROVIDER_ID_MIGRATIONS,
        *QUOTA_MIGRATIONS,
        *RETENTION_MIGRATIONS,
        *USER_MIGRATIONS,
        *ACTIVITY_MIGRATIONS,
    ]
)
ALL_MIGRATIONS = sorted([*LEAD_MIGRATIONS, *MAIL_MIGRATIONS])


def applied_from(first: str) -> list[str]:
    """What `migrate` applies after a rollback down to ``first``: it and every later one."""
    return [migration for migration in ALL_MIGRATIONS if migration >= first]


LEAD_TABLES = {"accounts", "api_keys", "leads"}
MAIL_TABLES = {"templates", "messages", "idempotency_keys"}
IMPORT_TABLES = {"lead_imports", "lead_import_chunks", "lead_import_errors"}
QUEUE_TABLES = {"pgqueuer", "pgqueuer_log", "pgqueuer_statistics", "pgqueuer_schedules"}
CAMPAIGN_TABLES = {"campaigns", "campaign_recipients"}
SENDER_TABLES = {"sender_domains"}
SUPPRESSION_TABLES = {"suppressions"}
LIMITER_TABLES = {"rate_grants", "rate_holds"}  # Postgres only
EVENT_TABLES = {"message_events"}
SECRET_TABLES = {"installation_secrets"}
TEMPLATE_TABLES = {"account_templates", "template_versions"}
LOG_TABLES = {"message_addresses"}
TIMELINE_TABLES = {"lead_events"}
ACTION_TABLES = {"lead_actions", "lead_action_members"}
USER_TABLES = {"users", "user_sessions"}
ACTIVITY_TABLES = {"activity_counts"}
OUR_TABLES = (
    LEAD_TABLES
    | MAIL_TABLES
    | IMPORT_TABLES
    | CAMPAIGN_TABLES
    | SENDER_TABLES
    | SUPPRESSION_TABLES
    | EVENT_TABLES
    | SECRET_TABLES
    | TEMPLATE_TABLES
    | LOG_TABLES
    | TIMELINE_TABLES
    | ACTION_TABLES
    | USER_TABLES
    | ACTIVITY_TABLES
)
LEAD_COLUMNS = {
    "lead_id",
    "account_id",
    "name",
    "email",
    "email_key",
    "source",
    "note",
    "phone",
    "created_at",
    "updated_at",
    "tags",
    "fields",
}
COLUMNS = {
    "leads": LEAD_COLUMNS,
    "templates": {
        "template_id",
        "name",
        "subject",
        "body",
        "created_at",
        "updated_at",
        "version",
    },
    "messages": {
        "message_id",
        "account_id",
        "sender",
        "recipients",
        "subject",
        "template_id",
        "template_version",
        "test",
        "campaign_id",
        "status",
        "provider",
        "provider_message_id",
        "attempts",
        "last_error",
        "created_at",
        "updated_at",
    },
    "idempotency_keys": {
        "claim_id",
        "account_id",
        "key",
        "fingerprint",
        "token",
        "state",
        "message_ids",
        "created_at",
        "updated_at",
    },
}
UNIQUE_EMAIL_INDEX = "leads_account_email_key"
LISTING_INDEX = "leads_account_listing"
UNIQUE_CLAIM_INDEX = "idempotency_keys_account_key"
MESSAGES_INDEX = "messages_account_created"
OLD_MESSAGES_INDEX = "email_messages_account_created"  # before the table was renamed
PHONE_INDEX = "leads_account_phone"
UNIQUE_SENDER_INDEX = "sender_domains_account_domain"
TAGS_INDEX = "leads_tags"  # Postgres only: GIN
LEAD_INDEXES = {UNIQUE_EMAIL_INDEX, LISTING_INDEX}
MAIL_INDEXES = {UNIQUE_CLAIM_INDEX, MESSAGES_INDEX, OLD_MESSAGES_INDEX, PHONE_INDEX}


@dataclass(frozen=True)
class Schema:
    tables: frozenset[str]
    indexes: dict[str, str]  # name -> its CREATE INDEX statement
    columns: dict[str, frozenset[str]]  # of the tables in COLUMNS that exist

    def index(self, name: str) -> str:
        """The statement, with identifiers unquoted (SQLite keeps them as written)."""
        return self.indexes.get(name, "").replace('"', "")


@dataclass(frozen=True)
class EmptyDatabase:
    url: str
    database: Database

    async def schema(self) -> Schema:
        if self.database.kind == "sqlite":
            return sqlite_schema(sqlite_path(self.url))
        return await postgres_schema(self.url)


def sqlite_schema(path: str) -> Schema:
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        columns = {
            table: frozenset(
                name
                for (name,) in connection.execute(
                    "SELECT name FROM pragma_table_info(?)", (table,)
                ).fetchall()
            )
            for table in COLUMNS
        }
    finally:
        connection.close()
    return Schema(
        tables=frozenset(name for kind, name, _ in rows if kind == "table"),
        indexes={name: sql for kind, name, sql in rows if kind == "index" and sql is not None},
        columns={table: names for table, names in columns.items() if names},
    )


async def postgres_schema(url: str) -> Schema:
    connection = await asyncpg.connect(url)
    try:
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
        indexes = await connection.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
        )
        columns = await connection.fetch(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = ANY($1::text[])",
            list(COLUMNS),
        )
    finally:
        await connection.close()
    by_table: dict[str, set[str]] = {}
    for row in columns:
        by_table.setdefault(row["table_name"], set()).add(row["column_name"])
    return Schema(
        tables=frozenset(row["table_name"] for row in tables),
        indexes={row["indexname"]: row["indexdef"] for row in indexes},
        columns={table: frozenset(names) for table, names in by_table.items()},
    )


class Target(NamedTuple):
    kind: str
    url: str  # the SQLite file, or the Postgres server to make a fresh database on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, sqlite_url: str) -> Target:
    if request.param == "sqlite":
        return Target("sqlite", sqlite_url)
    return Target("postgres", request.getfixturevalue("postgres_server"))


@pytest.fixture
async def empty(target: Target) -> AsyncIterator[EmptyDatabase]:
    if target.kind == "sqlite":
        async with Database.from_url(target.url).running() as database:
            yield EmptyDatabase(target.url, database)
        return
    async with fresh_database(target.url) as url, Database.from_url(url).running() as database:
        yield EmptyDatabase(url, database)


def assert_migrated(schema: Schema) -> None:
    assert schema.tables >= {*OUR_TABLES, "migration"}
    assert schema.columns == COLUMNS
    unique = schema.index(UNIQUE_EMAIL_INDEX)
    assert "UNIQUE" in unique.upper()
    assert "(account_id, email_key)" in unique
    assert LISTING_INDEX in schema.indexes
    claims = schema.index(UNIQUE_CLAIM_INDEX)
    assert "UNIQUE" in claims.upper()
    assert "idempotency_keys" in claims
    assert "(account_id, key)" in claims
    # A message is read by its id alone: no index by time (its last migration dropped it).
    assert MESSAGES_INDEX not in schema.indexes
    assert OLD_MESSAGES_INDEX not in schema.indexes
    phone = schema.index(PHONE_INDEX)
    assert "(account_id, phone)" in phone
    assert "WHERE" in phone.upper()  # only the leads that have one
    senders = schema.index(UNIQUE_SENDER_INDEX)
    assert "UNIQUE" in senders.upper()
    assert "(account_id, domain)" in senders


def assert_rolled_back(schema: Schema) -> None:
    assert not schema.tables & (OUR_TABLES | QUEUE_TABLES | LIMITER_TABLES)
    assert not schema.indexes.keys() & (LEAD_INDEXES | MAIL_INDEXES)


async def assert_usable(database: Database) -> None:
    """The migrated schema does what the adapters need, unique email key included."""
    keys, leads = PiccoloApiKeyStore(database), PiccoloLeadRepository(database)
    key = await new_account_key(keys, label="migrations", prefix="lm_migrate")
    lead = await leads.add(a_lead(key.account_id, email="ada@example.com"))
    with pytest.raises(DuplicateLead):
        await leads.add(a_lead(key.account_id, email="ADA@example.com"))
    assert await leads.list(key.account_id, LeadQuery()) == [lead]
    await assert_mail_usable(database, key.account_id)
    await assert_sender_domains_usable(database, key.account_id)


async def assert_mail_usable(database: Database, account_id: str) -> None:
    """Templates, messages and claims work, and a claim's key is unique for real."""
    templates = PiccoloTemplateRepository(database)
    source = TemplateSource("welcome", "Welcome", "Hi {{name}}", "<p>Hello {{name}}</p>")
    await templates.sync([source], T0)
    assert [t.template_id for t in await templates.list()] == ["welcome"]

    log = PiccoloMessageRepository(database)
    message = a_message(account_id, template_id="welcome")
    await log.add([message])
    assert await log.get(account_id, message.message_id) == message

    claims = PiccoloIdempotencyStore(database)
    claim = a_claim(account_id, key="k")
    assert await claims.claim(claim) == claim
    t = database.tables.idempotency_keys
    duplicate = t(claim_id="clm_duplicate", account_id=account_id, key="k", created_at=T0)
    # The driver's own error: this bypasses the adapter.
    with pytest.raises((asyncpg.UniqueViolationError, sqlite3.IntegrityError)) as caught:
        await t.insert(duplicate)
    assert is_unique_violation(caught.value)


async def assert_sender_domains_usable(database: Database, account_id: str) -> None:
    """A sender domain is stored, and unique within its account for real."""
    domains = PiccoloSenderDomainRepository(database)
    added, _ = await domains.add(account_id, "school.example", T0)
    assert await domains.list(account_id) == [added]
    t = database.tables.sender_domains
    duplicate = t(account_id=account_id, domain="school.example", created_at=T0)
    # The driver's own error: this bypasses the adapter.
    with pytest.raises((asyncpg.UniqueViolationError, sqlite3.IntegrityError)) as caught:
        await t.insert(duplicate)
    assert is_unique_violation(caught.value)


async def test_the_sender_domains_go_back_and_forth_and_leave_the_rest(
    empty: EmptyDatabase,
) -> None:
    await migrate(empty.database)
    await assert_usable(empty.database)

    await rollback_all(empty.database, down_to=SENDER_MIGRATIONS[0])

    schema = await empty.schema()
    assert not schema.tables & SENDER_TABLES
    assert UNIQUE_SENDER_INDEX not in schema.indexes
    assert schema.tables >= CAMPAIGN_TABLES | LEAD_TABLES  # what came before stays
    assert await migrate(empty.database) == applied_from(SENDER_MIGRATIONS[0])
    assert_migrated(await empty.schema())
    await assert_usable(empty.database)


class TestMigrations:
    async def test_a_fresh_database_has_none_applied(self, empty: EmptyDatabase) -> None:
        assert await applied_migrations(empty.database) == []
        assert not (await empty.schema()).tables & OUR_TABLES

    async def test_migrate_applies_every_migration_then_none(self, empty: EmptyDatabase) -> None:
        first = await migrate(empty.database)
        second = await migrate(empty.database)

        assert first == ALL_MIGRATIONS
        assert second == []
        assert await applied_migrations(empty.database) == ALL_MIGRATIONS
        assert_migrated(await empty.schema())
        await assert_usable(empty.database)

    async def test_rollback_all_then_migrate_again(self, empty: EmptyDatabase) -> None:
        await migrate(empty.database)

        await rollback_all(empty.database)

        assert await applied_migrations(empty.database) == []
        assert_rolled_back(await empty.schema())

        assert await migrate(empty.database) == ALL_MIGRATIONS
        assert_migrated(await empty.schema())
        await assert_usable(empty.database)

    async def test_rollback_of_the_mail_migrations_leaves_the_rest(
        self, empty: EmptyDatabase
    ) -> None:
        await migrate(empty.database)
        await assert_usable(empty.database)  # rows in every table, the new ones included

        await rollback_all(empty.database, down_to=MAIL_MIGRATIONS[0])

        assert await applied_migrations(empty.database) == LEAD_MIGRATIONS
        schema = await empty.schema()
        assert schema.tables >= LEAD_TABLES
        assert not schema.tables & MAIL_TABLES
        assert schema.indexes.keys() >= LEAD_INDEXES
        assert not schema.indexes.keys() & MAIL_INDEXES

        assert await migrate(empty.database) == MAIL_MIGRATIONS
        assert_migrated(await empty.schema())
        await assert_usable(empty.database)

    async def test_undoing_the_rename_keeps_every_message_and_lead(
        self, empty: EmptyDatabase
    ) -> None:
        await migrate(empty.database)
        keys, leads = PiccoloApiKeyStore(empty.database), PiccoloLeadRepository(empty.database)
        key = await new_account_key(keys, label="rename", prefix="lm_rename")
        lead = await leads.add(a_lead(key.account_id, phone="+44 20 7946 0958"))
        message = a_message(key.account_id)
        await PiccoloMessageRepository(empty.database).add([message])

        await rollback_all(empty.database, down_to=RENAME_MIGRATIONS[0])

        schema = await empty.schema()
        assert "email_messages" in schema.tables
        assert "messages" not in schema.tables
        assert OLD_MESSAGES_INDEX in schema.indexes
        assert not schema.indexes.keys() & {MESSAGES_INDEX, PHONE_INDEX}
        assert "phone" not in schema.columns["leads"]
        assert not schema.columns["leads"] & {"tags", "fields"}

        assert await migrate(empty.database) == RENAME_MIGRATIONS
        assert_migrated(await empty.schema())
        stored = await PiccoloMessageRepository(empty.database).get(
            key.account_id, message.message_id
        )
        assert stored == message
        assert await leads.get(key.account_id, lead.lead_id) == dataclasses.replace(lead, phone="")


@pytest.mark.postgres
async def test_two_migrators_at_once_apply_each_migration_once(postgres_server: str) -> None:
    # Two workers (or serve and the CLI) starting together: the advisory lock serialises them.
    async with (
        fresh_database(postgres_server) as url,
        Database.from_url(url).running() as one,
        Database.from_url(url).running() as two,
    ):
        results = await asyncio.gather(migrate(one), migrate(two))

        assert sorted(results, key=len) == [[], ALL_MIGRATIONS]
        assert await applied_migrations(one) == ALL_MIGRATIONS
        assert_migrated(await postgres_schema(url))


class TestTagsAndFieldsMigrations:
    async def test_existing_leads_get_no_tags_and_no_fields_and_back(
        self, empty: EmptyDatabase
    ) -> None:
        await migrate(empty.database)
        await rollback_all(empty.database, down_to=TAG_MIGRATIONS[0])
        schema = await empty.schema()
        assert not schema.columns["leads"] & {"tags", "fields"}
        assert TAGS_INDEX not in schema.indexes
        # A lead stored before the columns existed, by SQL of that time.
        keys = PiccoloApiKeyStore(empty.database)
        key = await new_account_key(keys, label="tags", prefix="lm_tags")
        t = empty.database.tables.accounts  # any table of the engine will do for raw SQL
        await t.raw(
            "INSERT INTO leads (lead_id, account_id, name, email, email_key, source, note,"
            " phone, created_at, updated_at) VALUES ({}, {}, 'Ada', 'ada@example.com',"
            " 'ada@example.com', '', '', '', {}, {})",
            "ld_before",
            key.account_id,
            T0,
            T0,
        )

        assert await migrate(empty.database) == applied_from(TAG_MIGRATIONS[0])

        leads = PiccoloLeadRepository(empty.database)
        stored = await leads.get(key.account_id, "ld_before")
        assert stored is not None
        assert (stored.tags, dict(stored.fields)) == ((), {})
        schema = await empty.schema()
        if empty.database.kind == "postgres":
            assert "USING gin (tags)" in schema.index(TAGS_INDEX)
        else:
            assert TAGS_INDEX not in schema.indexes
        await assert_usable(empty.database)


async def test_the_limiter_tables_are_postgres_only_and_go_back_and_forth(
    empty: EmptyDatabase,
) -> None:
    postgres = empty.database.kind == "postgres"
    await migrate(empty.database)
    assert (await empty.schema()).tables & LIMITER_TABLES == (LIMITER_TABLES if postgres else set())
    assert await rate_take_exists(empty) is postgres

    await rollback_all(empty.database, down_to=LIMITER_MIGRATIONS[0])

    assert not (await empty.schema()).tables & LIMITER_TABLES
    assert not await rate_take_exists(empty)
    assert (await empty.schema()).tables >= CAMPAIGN_TABLES  # what came before stays
    assert await migrate(empty.database) == applied_from(LIMITER_MIGRATIONS[0])
    assert await rate_take_exists(empty) is postgres


async def rate_take_exists(empty: EmptyDatabase) -> bool:
    if empty.database.kind != "postgres":
        return False
    connection = await asyncpg.connect(empty.url)
    try:
        found = await connection.fetchval("SELECT to_regproc('rate_take') IS NOT NULL")
    finally:
        await connection.close()
    return bool(found)


async def test_the_message_log_migration_indexes_the_messages_already_stored(
    empty: EmptyDatabase,
) -> None:
    await migrate(empty.database)
    await rollback_all(empty.database, down_to=LOG_MIGRATIONS[0])
    schema = await empty.schema()
    assert not schema.tables & LOG_TABLES
    assert "campaign_id" not in schema.columns["messages"]
    # Messages stored before the migration, by SQL of that time: one to two addresses,
    # one with a display name and capitals.
    keys = PiccoloApiKeyStore(empty.database)
    key = await new_account_key(keys, label="log", prefix="lm_log")
    t = empty.database.tables.accounts  # any table of the engine will do for raw SQL
    for message_id, recipients in (
        ("msg_before1", '["ada@example.com", "\\"Tom\\" <Tom@Example.com>"]'),
        ("msg_before2", '["tom@example.com"]'),
    ):
        await t.raw(
            "INSERT INTO messages (message_id, account_id, sender, recipients, subject,"
            " template_id, template_version, test, status, provider, provider_message_id,"
            " attempts, last_error, created_at, updated_at) VALUES ({}, {}, 'school@example.com',"
            " {}, 'Hi', NULL, NULL, FALSE, 'sent', 'console', NULL, 1, '', {}, {})",
            message_id,
            key.account_id,
            recipients,
            T0,
            T0,
        )

    assert await migrate(empty.database) == applied_from(LOG_MIGRATIONS[0])

    log = PiccoloMessageRepository(empty.database)
    to_tom = await log.list(key.account_id, MessageQuery.parse(to="TOM@example.com"), 10)
    assert [m.message_id for m in to_tom.messages] == ["msg_before2", "msg_before1"]
    to_ada = await log.list(key.account_id, MessageQuery.parse(to="ada@example.com"), 10)
    assert [m.message_id for m in to_ada.messages] == ["msg_before1"]
    assert all(m.campaign_id is None for m in to_tom.messages)
    schema = await empty.schema()
    assert {"messages_log", "message_addresses_log"} <= set(schema.indexes)
    await assert_usable(empty.database)


async def test_the_search_index_is_made_on_postgres_and_rolled_back(
    empty: EmptyDatabase,
) -> None:
    postgres = empty.database.kind == "postgres"
    await migrate(empty.database)
    assert ("leads_search" in (await empty.schema()).indexes) is postgres

    await rollback_all(empty.database, down_to=SEARCH_MIGRATIONS[0])

    assert "leads_search" not in (await empty.schema()).indexes
    assert await migrate(empty.database) == applied_from(SEARCH_MIGRATIONS[0])
    assert ("leads_search" in (await empty.schema()).indexes) is postgres
    await assert_usable(empty.database)


async def test_the_lead_events_table_comes_and_goes_with_its_migration(
    empty: EmptyDatabase,
) -> None:
    await migrate(empty.database)
    schema = await empty.schema()
    assert schema.tables >= TIMELINE_TABLES
    assert "lead_events_timeline" in schema.indexes

    await rollback_all(empty.database, down_to=TIMELINE_MIGRATIONS[0])

    assert not (await empty.schema()).tables & TIMELINE_TABLES
    assert await migrate(empty.database) == applied_from(TIMELINE_MIGRATIONS[0])
    await assert_usable(empty.database)


async def test_the_bulk_action_tables_come_and_go_with_their_migration(
    empty: EmptyDatabase,
) -> None:
    await migrate(empty.database)
    schema = await empty.schema()
    assert schema.tables >= ACTION_TABLES
    assert {"lead_action_members_chunk", "lead_actions_unfinished"} <= set(schema.indexes)

    await rollback_all(empty.database, down_to=ACTION_MIGRATIONS[0])

    assert not (await empty.schema()).tables & ACTION_TABLES
    assert await migrate(empty.database) == applied_from(ACTION_MIGRATIONS[0])
    await assert_usable(empty.database)


async def test_a_provider_id_of_any_length_is_kept_whole_after_its_migration(
    empty: EmptyDatabase,
) -> None:
    # Postgres held it to varchar(255) before: a 300-character id failed the record of a
    # message the provider had accepted. Back and forth, the column keeps working.
    await migrate(empty.database)
    await rollback_all(empty.database, down_to=PROVIDER_ID_MIGRATIONS[0])
    assert await migrate(empty.database) == applied_from(PROVIDER_ID_MIGRATIONS[0])
    keys = PiccoloApiKeyStore(empty.database)
    key = await new_account_key(keys, label="ids", prefix="lm_ids")
    messages = PiccoloMessageRepository(empty.database)
    message = a_message(key.account_id)
    await messages.add([message])
    sent = message.sent("<" + "x" * 298 + ">", 1, T0)

    await messages.update([sent])

    stored = await messages.get(key.account_id, message.message_id)
    assert stored is not None
    assert stored.provider_message_id == sent.provider_message_id
    assert len(stored.provider_message_id or "") == 300


async def test_daily_quotas_migrate_forwards_and_back(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    schema = await empty.schema()
    assert "account_sends" in schema.tables
    assert "account_sends_day" in set(schema.indexes)

    await rollback_all(empty.database, down_to=QUOTA_MIGRATIONS[0])

    assert "account_sends" not in (await empty.schema()).tables
    assert await migrate(empty.database) == applied_from(QUOTA_MIGRATIONS[0])
    await assert_usable(empty.database)


async def test_retention_indexes_migrate_forwards_and_back(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    indexes = set((await empty.schema()).indexes)
    assert {"idempotency_keys_created", "campaign_recipients_message"} <= indexes

    await rollback_all(empty.database, down_to=RETENTION_MIGRATIONS[0])

    indexes = set((await empty.schema()).indexes)
    assert not {"idempotency_keys_created", "campaign_recipients_message"} & indexes
    assert await migrate(empty.database) == applied_from(RETENTION_MIGRATIONS[0])
    await assert_usable(empty.database)


async def test_dashboard_users_migrate_forwards_and_back(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    assert (await empty.schema()).tables >= USER_TABLES

    await rollback_all(empty.database, down_to=USER_MIGRATIONS[0])

    assert not USER_TABLES & (await empty.schema()).tables
    assert await migrate(empty.database) == applied_from(USER_MIGRATIONS[0])
    await assert_usable(empty.database)
