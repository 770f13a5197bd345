"""The webhook's statements use the indexes the message events migration made, on both
databases: a message found by its provider's id through ``messages_provider_message`` (not a
scan of every message), a message's events listed through ``message_events_message``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest

from leadmail.adapters.db import message_events
from leadmail.adapters.db.connect import sqlite_path
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import migrate


async def test_sqlite_plans_use_the_indexes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    async with Database.from_url(url).running() as database:
        assert await migrate(database)
    with sqlite3.connect(sqlite_path(url)) as connection:
        find = message_events._FIND.sqlite.replace("{}", "?")
        listing = message_events._LIST.sqlite.replace("{}", "?")
        found = connection.execute(f"EXPLAIN QUERY PLAN {find}", ("a", "<a>", "resend")).fetchall()
        listed = connection.execute(f"EXPLAIN QUERY PLAN {listing}", ("acc", "msg")).fetchall()
    assert "messages_provider_message" in str(found), found
    assert "message_events_message" in str(listed), listed


@pytest.mark.postgres
async def test_postgres_plans_use_the_indexes(postgres_url: str) -> None:
    connection = await asyncpg.connect(postgres_url)
    try:
        # A handful of rows: make the planner show what it can use, not what is cheapest.
        await connection.execute("SET enable_seqscan = off")
        # The plan a prepared statement settles on: the partial index's condition (an id
        # there) must follow from the parameters, whatever their values.
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        found = await connection.fetch(
            f"EXPLAIN {message_events._FIND.postgres}", "a", "<a>", "resend"
        )
        listed = await connection.fetch(f"EXPLAIN {message_events._LIST.postgres}", "acc", "msg")
    finally:
        await connection.close()
    assert "messages_provider_message" in str(found), found
    assert "message_events_message" in str(listed), listed
