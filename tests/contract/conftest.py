"""Every contract suite runs once per adapter: memory, Piccolo on SQLite, Piccolo on Postgres.

The Postgres case takes the migrated session database from ``postgres_url``, so it skips
(or fails, in CI) exactly as that fixture decides. The mail suite's implementations are
its own (``mail``, parametrised by each test over the ones that apply: mail_support.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import NamedTuple

import pytest

from leadmail.adapters.db.activity import PiccoloActivityCounts
from leadmail.adapters.db.campaign_recipients import PiccoloRecipientRepository
from leadmail.adapters.db.campaigns import PiccoloCampaignRepository
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.idempotency import PiccoloIdempotencyStore
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.lead_actions import PiccoloLeadActionRepository
from leadmail.adapters.db.lead_events import PiccoloLeadEventRepository
from leadmail.adapters.db.lead_imports import PiccoloLeadImportRepository
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.messages import PiccoloMessageRepository
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.db.quotas import PiccoloQuotaRepository
from leadmail.adapters.db.sender_domains import PiccoloSenderDomainRepository
from leadmail.adapters.db.suppressions import PiccoloSuppressionRepository
from leadmail.adapters.db.templates import (
    PiccoloAccountTemplateRepository,
    PiccoloTemplateRepository,
)
from leadmail.adapters.db.users import PiccoloUserStore
from leadmail.adapters.mail.providers import CONSOLE
from leadmail.adapters.memory.account_templates import MemoryAccountTemplateRepository
from leadmail.adapters.memory.activity import MemoryActivityCounts
from leadmail.adapters.memory.campaigns import MemoryCampaignRepository, MemoryRecipientRepository
from leadmail.adapters.memory.idempotency import MemoryIdempotencyStore
from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.lead_actions import MemoryLeadActionRepository
from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.quotas import MemoryQuotaRepository
from leadmail.adapters.memory.sender_domains import MemorySenderDomainRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.adapters.memory.templates import MemoryTemplateRepository
from leadmail.adapters.memory.users import MemoryUserStore
from tests.contract.mail_support import (
    HTTP,
    RECORDING_BATCHES,
    ConsoleHarness,
    Harness,
    HttpHarness,
    RecordingHarness,
)
from tests.contract.support import ACTION_BATCH_IN_TESTS, Storage
from tests.support.mail import key_for
from tests.support.standin import provider_standin

ADAPTERS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class Adapter(NamedTuple):
    kind: str
    shared_database: Database | None  # the session's Postgres database, for that case


@pytest.fixture(scope="session")
async def postgres_database(postgres_url: str) -> AsyncIterator[Database]:
    """One pool on the session's migrated database, shared by every Postgres case."""
    async with Database.from_url(postgres_url).running() as database:
        yield database


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    # A plain fixture: pytest-asyncio cannot set up an async fixture on demand from inside
    # a running one, so the Postgres fixtures (and their skip logic) are asked for here.
    kind: str = request.param
    if kind == "postgres":
        return Adapter(kind, request.getfixturevalue("postgres_database"))
    return Adapter(kind, None)


@pytest.fixture
async def storage(adapter: Adapter, sqlite_url: str) -> AsyncIterator[Storage]:
    if adapter.kind == "memory":
        leads = MemoryLeadRepository()
        campaigns = MemoryCampaignRepository()
        suppressions = MemorySuppressionRepository()
        lead_events = MemoryLeadEventRepository(leads)
        keys = MemoryApiKeyStore()
        messages = MemoryMessageRepository(suppressions)
        yield Storage(
            adapter.kind,
            leads,
            keys,
            MemoryTemplateRepository(),
            messages,
            MemoryIdempotencyStore(),
            MemoryLeadImportRepository(leads, lead_events),
            campaigns,
            MemoryRecipientRepository(leads, campaigns),
            suppressions,
            MemorySenderDomainRepository(),
            MemoryAccountTemplateRepository(),
            lead_events,
            MemoryLeadActionRepository(leads, lead_events, batch=ACTION_BATCH_IN_TESTS),
            MemoryQuotaRepository(),
            MemoryUserStore(keys),
            MemoryActivityCounts(leads, messages, suppressions),
        )
        return
    if adapter.shared_database is not None:
        yield _piccolo(adapter.kind, adapter.shared_database)
        return
    database = Database.from_url(sqlite_url)
    await database.start()
    try:
        assert await migrate(database)
        yield _piccolo(adapter.kind, database)
    finally:
        await database.close()


@pytest.fixture
def postgres_storage(postgres_database: Database) -> Storage:
    """The Piccolo adapters on the session's Postgres database: for what only Postgres
    promises (several workers at once)."""
    return _piccolo("postgres", postgres_database)


def _piccolo(kind: str, database: Database) -> Storage:
    return Storage(
        kind,
        PiccoloLeadRepository(database),
        PiccoloApiKeyStore(database),
        PiccoloTemplateRepository(database),
        PiccoloMessageRepository(database),
        PiccoloIdempotencyStore(database),
        PiccoloLeadImportRepository(database),
        PiccoloCampaignRepository(database),
        PiccoloRecipientRepository(database),
        PiccoloSuppressionRepository(database),
        PiccoloSenderDomainRepository(database),
        PiccoloAccountTemplateRepository(database),
        PiccoloLeadEventRepository(database),
        PiccoloLeadActionRepository(database, batch=ACTION_BATCH_IN_TESTS),
        PiccoloQuotaRepository(database),
        PiccoloUserStore(database),
        PiccoloActivityCounts(database),
        database,
    )


@pytest.fixture
async def mail(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """The EmailProvider implementation named by the test's parameter (see mail_support)."""
    kind: str = request.param
    if kind in HTTP:
        with provider_standin(api_key=key_for(kind)) as standin:
            harness: Harness = HttpHarness(kind, standin)
            try:
                yield harness
            finally:
                await harness.teardown()
        return
    if kind == CONSOLE:
        harness = ConsoleHarness()
    else:
        harness = RecordingHarness(batches=kind == RECORDING_BATCHES)
    try:
        yield harness
    finally:
        await harness.teardown()
