"""Migrations forwards, again, back and forwards again, on a fresh SQLite file and a fresh
Postgres database."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import NamedTuple

import asyncpg
import pytest

from leadmail.adapters.db.engine import Database, sqlite_path
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.migrate import applied_migrations, migrate, rollback_all
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t00_59_20_088300_initial as initial,
)
from leadmail.adapters.db.migrations import (
    leadmail_2026_11_22t01_05_00_000000_lead_indexes as lead_indexes,
)
from leadmail.domain.leads import LeadQuery
from leadmail.ports.errors import DuplicateLead
from tests.contract.support import T0, a_lead, unique_account_name, unique_digest
from tests.postgres import fresh_database

ALL_MIGRATIONS = sorted([initial.ID, lead_indexes.ID])
OUR_TABLES = {"accounts", "api_keys", "leads"}
LEAD_COLUMNS = {
    "lead_id",
    "account_id",
    "name",
    "email",
    "email_key",
    "source",
    "note",
    "created_at",
    "updated_at",
}
UNIQUE_EMAIL_INDEX = "leads_account_email_key"
LISTING_INDEX = "leads_account_listing"


@dataclass(frozen=True)
class Schema:
    tables: frozenset[str]
    indexes: dict[str, str]  # name -> its CREATE INDEX statement
    lead_columns: frozenset[str]


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
        columns = connection.execute("SELECT name FROM pragma_table_info('leads')").fetchall()
    finally:
        connection.close()
    return Schema(
        tables=frozenset(name for kind, name, _ in rows if kind == "table"),
        indexes={name: sql for kind, name, sql in rows if kind == "index" and sql is not None},
        lead_columns=frozenset(name for (name,) in columns),
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
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = 'leads'"
        )
    finally:
        await connection.close()
    return Schema(
        tables=frozenset(row["table_name"] for row in tables),
        indexes={row["indexname"]: row["indexdef"] for row in indexes},
        lead_columns=frozenset(row["column_name"] for row in columns),
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
    assert schema.lead_columns == LEAD_COLUMNS
    unique = schema.indexes.get(UNIQUE_EMAIL_INDEX, "")
    assert "UNIQUE" in unique.upper()
    assert "(account_id, email_key)" in unique
    assert LISTING_INDEX in schema.indexes


def assert_rolled_back(schema: Schema) -> None:
    assert not schema.tables & OUR_TABLES
    assert UNIQUE_EMAIL_INDEX not in schema.indexes
    assert LISTING_INDEX not in schema.indexes


async def assert_usable(database: Database) -> None:
    """The migrated schema does what the adapters need, unique email key included."""
    keys, leads = PiccoloApiKeyStore(database), PiccoloLeadRepository(database)
    key = await keys.create_key(
        account_name=unique_account_name(),
        label="migrations",
        digest=unique_digest(),
        prefix="lm_migrate",
        now=T0,
    )
    lead = await leads.add(a_lead(key.account_id, email="ada@example.com"))
    with pytest.raises(DuplicateLead):
        await leads.add(a_lead(key.account_id, email="ADA@example.com"))
    assert await leads.list(key.account_id, LeadQuery()) == [lead]


class TestMigrations:
    async def test_a_fresh_database_has_none_applied(self, empty: EmptyDatabase) -> None:
        assert await applied_migrations(empty.database) == []
        assert not (await empty.schema()).tables & OUR_TABLES

    async def test_migrate_applies_both_migrations_then_none(self, empty: EmptyDatabase) -> None:
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
