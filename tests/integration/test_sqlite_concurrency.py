"""SQLite allows one writer at a time: concurrent requests must queue, never fail with
"database is locked"."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import TypeVar

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.migrate import migrate
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead
from tests.contract.support import a_lead, moment, new_account_key

WRITERS = 50
T = TypeVar("T")


@pytest.fixture
async def database(sqlite_url: str) -> AsyncIterator[Database]:
    async with Database.from_url(sqlite_url).running() as database:
        await migrate(database)
        yield database


async def new_account(database: Database) -> str:
    key = await new_account_key(
        PiccoloApiKeyStore(database), label="concurrency", prefix="lm_concur"
    )
    return key.account_id


async def all_succeed(calls: Sequence[Awaitable[T]]) -> list[T]:
    """Run every call at once; fail listing every error, not just the first."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    assert errors == [], f"{len(errors)} of {len(results)} calls failed"
    return [r for r in results if not isinstance(r, BaseException)]


def leads_for(account_id: str) -> list[Lead]:
    return [
        a_lead(account_id, email=f"writer{i}@example.com", created_at=moment(i))
        for i in range(WRITERS)
    ]


async def stored(repository: PiccoloLeadRepository, account_id: str) -> list[Lead]:
    return await repository.list(account_id, LeadQuery(limit=100))


async def test_concurrent_adds_all_succeed(database: Database) -> None:
    repository = PiccoloLeadRepository(database)
    account = await new_account(database)
    leads = leads_for(account)

    added = await all_succeed([repository.add(lead) for lead in leads])

    assert added == leads
    assert sorted(await stored(repository, account), key=lambda lead: lead.created_at) == leads


async def test_concurrent_updates_all_succeed(database: Database) -> None:
    repository = PiccoloLeadRepository(database)
    account = await new_account(database)
    leads = leads_for(account)
    for lead in leads:
        await repository.add(lead)
    changed = [
        dataclasses.replace(
            lead,
            name=f"Writer {i}",
            email=f"renamed{i}@example.org",
            updated_at=moment(10_000 + i),
        )
        for i, lead in enumerate(leads)
    ]

    replaced = await all_succeed([repository.replace(lead) for lead in changed])

    assert replaced == changed
    assert sorted(await stored(repository, account), key=lambda lead: lead.created_at) == changed


async def test_reads_proceed_among_concurrent_writes(database: Database) -> None:
    repository = PiccoloLeadRepository(database)
    account = await new_account(database)
    leads = leads_for(account)

    calls: list[Awaitable[object]] = []
    for lead in leads:
        calls.append(repository.add(lead))
        calls.append(repository.list(account, LeadQuery(limit=100)))
    results = await all_succeed(calls)

    listings = [r for r in results if isinstance(r, list)]
    assert len(listings) == WRITERS
    assert all(len(listing) <= WRITERS for listing in listings)
    assert len(await stored(repository, account)) == WRITERS


async def test_two_databases_on_one_file_both_write(sqlite_url: str) -> None:
    # Two Database objects stand for two processes (the server and the CLI): their
    # in-process write locks do not see each other, so SQLite's busy timeout must queue them.
    async with contextlib.AsyncExitStack() as stack:
        one, two = [
            await stack.enter_async_context(Database.from_url(sqlite_url).running())
            for _ in range(2)
        ]
        await migrate(one)
        account = await new_account(one)
        leads = leads_for(account)
        repositories = [PiccoloLeadRepository(one), PiccoloLeadRepository(two)]

        await all_succeed([repositories[i % 2].add(lead) for i, lead in enumerate(leads)])

        assert len(await stored(repositories[0], account)) == WRITERS
        assert len(await stored(repositories[1], account)) == WRITERS
