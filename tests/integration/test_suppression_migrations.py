"""The suppression list's migrations forwards and back, on SQLite and Postgres: its table,
then its indexes (raw_migration.TablesThenSql), then the listing of one reason; one entry
per address and account for real, and undone leaving the rest."""

from __future__ import annotations

import sqlite3

import asyncpg
import pytest

from leadmail.adapters.db.errors import is_unique_violation
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.migrate import applied_migrations, migrate, rollback_all
from leadmail.domain.suppressions import address_digest
from tests.contract.support import T0, new_account_key
from tests.integration.test_migrations import (
    CAMPAIGN_TABLES,
    SUPPRESSION_MIGRATIONS,
    SUPPRESSION_TABLES,
    EmptyDatabase,
    applied_from,
    empty,
    target,
)

__all__ = ["empty", "target"]  # the fixtures, shared with the migrations' own tests
INDEXES = {
    "suppressions_digest": "(account_id, digest)",
    "suppressions_listing": "(account_id, created_at DESC, digest DESC)",
    "suppressions_reason": "(account_id, reason, created_at DESC, digest DESC)",
}


async def test_the_suppression_migration_goes_back_and_forth(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    schema = await empty.schema()
    assert schema.tables >= SUPPRESSION_TABLES
    for name, columns in INDEXES.items():
        assert columns in schema.index(name), name
    assert "UNIQUE" in schema.index("suppressions_digest").upper()

    await rollback_all(empty.database, down_to=SUPPRESSION_MIGRATIONS[0])

    assert not set(await applied_migrations(empty.database)) & set(SUPPRESSION_MIGRATIONS)
    schema = await empty.schema()
    assert not schema.tables & SUPPRESSION_TABLES
    assert not schema.indexes.keys() & INDEXES.keys()
    assert schema.tables >= CAMPAIGN_TABLES  # what came before stays
    assert await migrate(empty.database) == applied_from(SUPPRESSION_MIGRATIONS[0])
    assert (await empty.schema()).tables >= SUPPRESSION_TABLES


async def test_an_address_has_one_entry_per_account_for_real(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    key = await new_account_key(
        PiccoloApiKeyStore(empty.database), label="suppressions", prefix="lm_suppress"
    )
    t = empty.database.tables.suppressions
    digest = address_digest("ada@example.com")

    def row(reason: str) -> object:
        return t(
            account_id=key.account_id,
            digest=digest,
            email="ada@example.com",
            reason=reason,
            created_at=T0,
        )

    await t.insert(row("manual"))
    # The driver's own error: this bypasses the adapter.
    with pytest.raises((asyncpg.UniqueViolationError, sqlite3.IntegrityError)) as caught:
        await t.insert(row("bounced"))
    assert is_unique_violation(caught.value)
