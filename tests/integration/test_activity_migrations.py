"""The activity counts' migration forwards and back, on SQLite and Postgres: the leads and
messages already stored are counted as it applies (the backfill), what is written after is
counted by its triggers, and undone it leaves no trigger behind (writes go on)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

from leadmail.adapters.db.activity import PiccoloActivityCounts
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.messages import PiccoloMessageRepository
from leadmail.adapters.db.migrate import migrate, rollback_all
from leadmail.adapters.db.statements import plain_statement
from leadmail.domain.campaigns import HANDED_BACK
from leadmail.domain.email import MessageStatus
from leadmail.domain.segments import LeadFilter
from tests.contract.support import a_lead, a_message, new_account_key
from tests.integration.test_migrations import (
    ACTIVITY_MIGRATIONS,
    ACTIVITY_TABLES,
    EmptyDatabase,
    applied_from,
    empty,
    target,
)

__all__ = ["empty", "target"]
DAY = datetime(2026, 3, 10, 12, tzinfo=UTC)
TRIGGERS = {
    "activity_leads_added",
    "activity_leads_removed",
    "activity_messages_added",
    "activity_messages_changed",
    "activity_messages_removed",
}


async def triggers(empty: EmptyDatabase) -> set[str]:
    if empty.database.kind == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    else:
        query = "SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal"
    rows = await empty.database.fetch(plain_statement(query))
    return {str(row["name"]) for row in rows}


async def test_what_is_stored_is_counted_as_the_migration_applies(empty: EmptyDatabase) -> None:
    await migrate(empty.database)
    assert await triggers(empty) >= TRIGGERS
    await rollback_all(empty.database, down_to=ACTIVITY_MIGRATIONS[0])
    assert not (await empty.schema()).tables & ACTIVITY_TABLES
    assert not await triggers(empty) & TRIGGERS

    # Written with no trigger: the migration must find them.
    database = empty.database
    key = await new_account_key(PiccoloApiKeyStore(database), label="activity", prefix="lm_act")
    account = key.account_id
    leads = PiccoloLeadRepository(database)
    for i in range(3):
        await leads.add(a_lead(account, email=f"before{i}@example.com", created_at=DAY))
    messages = PiccoloMessageRepository(database)
    made = [a_message(account, created_at=DAY) for _ in range(3)]
    await messages.add(
        [
            dataclasses.replace(made[0], status=MessageStatus.DELIVERED),
            made[1].failed("refused", 1, DAY),
            made[2].failed(HANDED_BACK, 1, DAY),  # no outcome: counted nowhere
        ]
    )

    assert await migrate(database) == applied_from(ACTIVITY_MIGRATIONS[0])
    await leads.add(a_lead(account, email="after@example.com", created_at=DAY))

    counts = PiccoloActivityCounts(database)
    assert await counts.leads_per_day(account, DAY.date()) == {date(2026, 3, 10): 4}
    assert await leads.count(account, LeadFilter()) == 4
    assert await counts.messages_per_day(account, DAY.date()) == {
        (date(2026, 3, 10), "delivered"): 1,
        (date(2026, 3, 10), "failed"): 1,
    }

    # A purge deletes messages in one statement: they leave their counts.
    gone = plain_statement("DELETE FROM messages WHERE message_id IN (%s, %s)")
    await database.execute(gone, made[0].message_id, made[2].message_id)
    assert await counts.messages_per_day(account, DAY.date()) == {
        (date(2026, 3, 10), "failed"): 1,
    }


async def test_an_account_deleted_takes_its_counts(empty: EmptyDatabase) -> None:
    """Its leads go by cascade, and their triggers count nothing for an account gone."""
    await migrate(empty.database)
    database = empty.database
    key = await new_account_key(PiccoloApiKeyStore(database), label="activity", prefix="lm_act")
    await PiccoloLeadRepository(database).add(a_lead(key.account_id, created_at=DAY))
    remaining = plain_statement("SELECT count(*) AS n FROM activity_counts WHERE account_id = %s")
    assert (await database.fetch(remaining, key.account_id))[0]["n"] > 0

    await database.execute(
        plain_statement("DELETE FROM accounts WHERE account_id = %s"), key.account_id
    )

    assert (await database.fetch(remaining, key.account_id))[0]["n"] == 0
