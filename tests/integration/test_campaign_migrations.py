"""The campaign migration forwards and back, on SQLite and Postgres: its tables, then its
indexes (one migration: raw_migration.TablesThenSql), the recipient of a lead unique per
campaign for real, and undone leaving the rest."""

from __future__ import annotations

import sqlite3

import asyncpg
import pytest

from leadmail.adapters.db.campaigns import PiccoloCampaignRepository
from leadmail.adapters.db.errors import is_unique_violation
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.migrate import applied_migrations, migrate, rollback_all
from tests.contract.support import T0, a_campaign, new_account_key
from tests.integration.test_migrations import (
    CAMPAIGN_MIGRATIONS,
    CAMPAIGN_TABLES,
    IMPORT_TABLES,
    EmptyDatabase,
    applied_from,
    empty,
    target,
)

__all__ = ["empty", "target"]  # the fixtures, shared with the migrations' own tests
INDEXES = {
    "campaigns_account_listing": "(account_id, created_at DESC, campaign_id DESC)",
    "campaign_recipients_lead": "(campaign_id, lead_id)",
    "campaign_recipients_status": "(campaign_id, status, lead_id)",
    "campaigns_status": "(status)",
}


async def test_the_campaign_migration_goes_back_and_forth(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    schema = await empty.schema()
    assert schema.tables >= CAMPAIGN_TABLES
    for name, columns in INDEXES.items():
        assert columns in schema.index(name), name
    assert "UNIQUE" in schema.index("campaign_recipients_lead").upper()

    await rollback_all(empty.database, down_to=CAMPAIGN_MIGRATIONS[0])

    assert not set(await applied_migrations(empty.database)) & set(CAMPAIGN_MIGRATIONS)
    schema = await empty.schema()
    assert not schema.tables & CAMPAIGN_TABLES
    assert not schema.indexes.keys() & INDEXES.keys()
    assert schema.tables >= IMPORT_TABLES  # what came before stays
    assert await migrate(empty.database) == applied_from(CAMPAIGN_MIGRATIONS[0])
    assert (await empty.schema()).tables >= CAMPAIGN_TABLES


async def test_a_lead_is_one_recipient_of_a_campaign_for_real(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    key = await new_account_key(
        PiccoloApiKeyStore(empty.database), label="campaigns", prefix="lm_campaign"
    )
    campaign = a_campaign(key.account_id)
    await PiccoloCampaignRepository(empty.database).add(campaign)
    t = empty.database.tables.campaign_recipients

    def row() -> object:
        return t(campaign_id=campaign.campaign_id, lead_id="ld_1", status="pending", updated_at=T0)

    await t.insert(row())
    # The driver's own error: this bypasses the adapter.
    with pytest.raises((asyncpg.UniqueViolationError, sqlite3.IntegrityError)) as caught:
        await t.insert(row())
    assert is_unique_violation(caught.value)
