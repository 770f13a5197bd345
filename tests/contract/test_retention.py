"""The RetentionStore contract (ports/retention.py), run against every adapter: each call
removes at most its batch of what is older than the cutoff, oldest first, of the account
asked only, and nothing newer; a message goes with its events and its entries in the
address index, and its campaign recipient keeps its status and loses its message id.

The Postgres case runs on the session's shared database: the old rows here are dated
2001, and every cutoff is 2002, so no other test's rows (T0 is 2026) are ever old."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.db.message_events import PiccoloMessageEventRepository
from leadmail.adapters.db.retention import PiccoloRetentionStore
from leadmail.adapters.db.statements import plain_statement
from leadmail.adapters.memory.campaigns import MemoryRecipientRepository
from leadmail.adapters.memory.idempotency import MemoryIdempotencyStore
from leadmail.adapters.memory.lead_actions import MemoryLeadActionRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.retention import MemoryRetentionStore
from leadmail.domain.campaign_recipients import RecipientOutcome
from leadmail.domain.campaigns import CampaignStatus, RecipientStatus
from leadmail.domain.email import Message
from leadmail.domain.lead_imports import (
    ImportBatch,
    ImportedRow,
    ImportMode,
    ImportStatus,
    LeadImport,
    RowError,
    new_import_id,
)
from leadmail.domain.message_events import Bounce, EventType, MessageEvent
from leadmail.domain.message_listing import MessageQuery
from leadmail.domain.retention import MessageBatch
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.retention import RetentionStore
from tests.contract.support import T0, Storage, a_campaign, a_claim, a_lead, a_message

OLD = datetime(2001, 3, 1, 9, 0, tzinfo=UTC)
CUTOFF = datetime(2002, 1, 1, tzinfo=UTC)


def old(minutes: int) -> datetime:
    return OLD + timedelta(minutes=minutes)


@dataclass
class Rig:
    storage: Storage
    events: MessageEventRepository
    store: RetentionStore


@pytest.fixture
def rig(storage: Storage) -> Rig:
    if storage.database is None:
        assert isinstance(storage.messages, MemoryMessageRepository)
        assert isinstance(storage.claims, MemoryIdempotencyStore)
        assert isinstance(storage.recipients, MemoryRecipientRepository)
        assert isinstance(storage.imports, MemoryLeadImportRepository)
        assert isinstance(storage.lead_actions, MemoryLeadActionRepository)
        events = MemoryMessageEventRepository(storage.messages)
        store: RetentionStore = MemoryRetentionStore(
            storage.claims,
            storage.messages,
            events,
            storage.recipients,
            storage.imports,
            storage.lead_actions,
        )
        return Rig(storage, events, store)
    database = storage.database
    return Rig(storage, PiccoloMessageEventRepository(database), PiccoloRetentionStore(database))


async def stored(rig: Rig, message: Message, *, bounced: bool = False) -> Message:
    await rig.storage.messages.add([message])
    done = message.sent(f"pm-{message.message_id}", 1, message.created_at)
    await rig.storage.messages.update([done])
    if bounced:
        event = MessageEvent(
            done.message_id, done.account_id, done.provider, f"ev-{done.message_id}",
            EventType.BOUNCED, Bounce.HARD, done.created_at, "550 no such user",
        )  # fmt: skip
        assert await rig.events.apply(event, done.created_at)
    return done


async def test_claims_before_the_cutoff_go_a_batch_at_a_time_and_newer_ones_stay(
    rig: Rig,
) -> None:
    claims = rig.storage.claims
    account = await rig.storage.new_account()
    olds = [await claims.claim(a_claim(account, created_at=old(i))) for i in range(3)]
    kept = await claims.claim(a_claim(account, created_at=T0))

    assert await rig.store.purge_claims(CUTOFF, 2) == 2
    assert await rig.store.purge_claims(CUTOFF, 2) == 1
    assert await rig.store.purge_claims(CUTOFF, 2) == 0

    # A key that is gone is a new request; the one that stayed is still the one stored.
    for gone in olds:
        again = await claims.claim(a_claim(account, key=gone.key, created_at=old(5)))
        assert again.token != gone.token
    assert (await claims.claim(a_claim(account, key=kept.key, created_at=T0))).token == kept.token


async def test_accounts_with_messages_names_those_holding_one_before_the_cutoff(
    rig: Rig,
) -> None:
    holding, newer_only, empty = [await rig.storage.new_account() for _ in range(3)]
    await stored(rig, a_message(holding, created_at=old(1)))
    await stored(rig, a_message(newer_only, created_at=T0))

    named = await rig.store.accounts_with_messages(CUTOFF)

    assert holding in named
    assert newer_only not in named
    assert empty not in named


async def test_a_batch_takes_the_oldest_messages_of_the_account_with_their_events(
    rig: Rig,
) -> None:
    messages = rig.storage.messages
    account = await rig.storage.new_account()
    other = await rig.storage.new_account()
    first = await stored(rig, a_message(account, created_at=old(1)), bounced=True)
    second = await stored(
        rig,
        a_message(account, to=('"Ada" <Ada@Example.com>', "grace@example.com"), created_at=old(2)),
    )
    third = await stored(rig, a_message(account, created_at=old(3)), bounced=True)
    newer = await stored(rig, a_message(account, created_at=T0), bounced=True)
    theirs = await stored(rig, a_message(other, created_at=old(1)), bounced=True)

    assert await rig.store.purge_messages(account, CUTOFF, 2) == MessageBatch(2, 1, 0)

    ids = [first.message_id, second.message_id, third.message_id, newer.message_id]
    assert [m.message_id for m in await messages.get_many(account, ids)] == ids[2:]
    assert await rig.events.list(account, first.message_id) == []
    assert await rig.store.purge_messages(account, CUTOFF, 2) == MessageBatch(1, 1, 0)
    assert await rig.store.purge_messages(account, CUTOFF, 2) == MessageBatch()
    assert [m.message_id for m in await messages.get_many(account, ids)] == [newer.message_id]
    assert len(await rig.events.list(account, newer.message_id)) == 1
    # Another account's old message is its own purge's.
    still = await messages.get(other, theirs.message_id)
    assert still is not None
    assert still.message_id == theirs.message_id
    assert len(await rig.events.list(other, theirs.message_id)) == 1


async def test_a_purged_message_is_found_by_no_address_and_newer_ones_still_are(
    rig: Rig,
) -> None:
    messages = rig.storage.messages
    account = await rig.storage.new_account()
    gone = await stored(
        rig,
        a_message(account, to=('"Ada" <Ada@Example.com>', "grace@example.com"), created_at=old(1)),
    )
    kept = await stored(rig, a_message(account, to=("ada@example.com",), created_at=T0))

    assert (await rig.store.purge_messages(account, CUTOFF, 10)).messages == 1

    for address in ("ada@example.com", "grace@example.com"):
        query = MessageQuery.parse(to=address)
        listed = [m.message_id for m in (await messages.list(account, query, 100)).messages]
        assert gone.message_id not in listed
    ada = MessageQuery.parse(to="ada@example.com")
    assert [m.message_id for m in (await messages.list(account, ada, 100)).messages] == [
        kept.message_id
    ]
    database = rig.storage.database
    if database is not None:  # the address index holds nothing of the purged message
        left = await database.fetch(
            plain_statement('SELECT "address" FROM "message_addresses" WHERE "message_id" = %s'),
            gone.message_id,
        )
        assert list(left) == []


async def test_a_purged_messages_campaign_recipient_keeps_its_status_without_its_id(
    rig: Rig,
) -> None:
    storage = rig.storage
    account = await storage.new_account()
    for email in ("ada@example.com", "grace@example.com"):
        await storage.leads.add(a_lead(account, email=email))
    campaign = a_campaign(account, status=CampaignStatus.RUNNING)
    await storage.campaigns.add(campaign)
    assert await storage.recipients.freeze(campaign) == 2
    batch = await storage.recipients.lease(
        campaign.campaign_id, 10, now=old(1), lease_until=old(60)
    )
    assert batch is not None
    for recipient in batch.recipients:
        assert recipient.message_id is not None
        message = a_message(
            account, to=(recipient.email,), created_at=old(2), message_id=recipient.message_id
        )
        await stored(rig, dataclasses.replace(message, campaign_id=campaign.campaign_id))
    outcomes = [RecipientOutcome(r.lead_id, RecipientStatus.SENT, "") for r in batch.recipients]
    assert await storage.recipients.record(batch, outcomes, old(3)) == 2

    purged = await rig.store.purge_messages(account, CUTOFF, 10)

    assert purged == MessageBatch(messages=2, events=0, unlinked=2)
    after = await storage.recipients.page(campaign.campaign_id, None, 10)
    assert [(r.status, r.message_id) for r in after] == [(RecipientStatus.SENT, None)] * 2
    counts = await storage.recipients.counts(campaign.campaign_id)
    assert counts.sent == 2


async def finished_import(rig: Rig, account: str, finished_at: datetime) -> str:
    """A finished import of ``account`` with two error rows."""
    imports = rig.storage.imports
    new = LeadImport(
        new_import_id(), account, ImportMode.CREATE, (), ImportStatus.RECEIVING, OLD, OLD
    )
    await imports.create(new)
    await imports.add_chunk(new.import_id, 0, b"email\nx\ny\n")
    assert await imports.queue(new.import_id, 10, OLD) is not None
    assert await imports.claim(new.import_id, "r1", OLD) is not None
    failed = [
        RowError(2, "email", "is not a valid email address", "x"),
        RowError(3, "email", "is not a valid email address", "y"),
    ]
    batch = ImportBatch(
        import_id=new.import_id, account_id=account, runner="r1", mode=ImportMode.CREATE,
        columns=frozenset(), start=0, end=2, leads=list[ImportedRow](), failed=failed,
        skipped=(), now=OLD,
    )  # fmt: skip
    assert await imports.write(batch) is not None
    assert await imports.finish(new.import_id, "r1", finished_at) is not None
    return new.import_id


async def test_error_rows_of_imports_finished_before_the_cutoff_go(rig: Rig) -> None:
    imports = rig.storage.imports
    account = await rig.storage.new_account()
    gone = await finished_import(rig, account, old(10))
    kept = await finished_import(rig, account, T0)

    assert await rig.store.purge_import_errors(CUTOFF, 1) == 1
    assert await rig.store.purge_import_errors(CUTOFF, 5) == 1
    assert await rig.store.purge_import_errors(CUTOFF, 5) == 0

    assert await imports.errors(account, gone, 0, 10) == []
    assert [row.row for row in await imports.errors(account, kept, 0, 10)] == [2, 3]
    found = await imports.get(account, gone)
    assert found is not None
    assert (found.status, found.failed) == (ImportStatus.DONE, 2)  # its counts stay


async def test_what_a_finish_stopped_half_way_left_of_a_file_and_a_frozen_set_goes(
    rig: Rig,
) -> None:
    """A finish that stopped between its statements leaves the file's pieces (or an
    action's frozen ids) behind: the SQL stores remove them. (The memory store's finish
    is one step: it never leaves any.)"""
    account = await rig.storage.new_account()
    imported = await finished_import(rig, account, T0)
    database = rig.storage.database
    if database is None:
        assert await rig.store.purge_import_files(10) == 0
        assert await rig.store.purge_action_members(10) == 0
        return
    insert_piece = plain_statement(
        'INSERT INTO "lead_import_chunks" ("import_id", "number", "data") VALUES (%s, %s, %s)'
    )
    for number in range(3):
        await database.execute(insert_piece, imported, number, b"a,b\n")
    running = LeadImport(
        new_import_id(), account, ImportMode.CREATE, (), ImportStatus.RECEIVING, T0, T0
    )
    await rig.storage.imports.create(running)
    await rig.storage.imports.add_chunk(running.import_id, 0, b"email\n")

    assert await rig.store.purge_import_files(2) == 2
    assert await rig.store.purge_import_files(2) == 1
    assert await rig.store.purge_import_files(2) == 0

    pieces = plain_statement(
        'SELECT "import_id" FROM "lead_import_chunks" WHERE "import_id" IN (%s, %s)'
    )
    assert [
        row["import_id"] for row in await database.fetch(pieces, imported, running.import_id)
    ] == [running.import_id]


async def test_the_job_log_before_the_cutoff_goes_where_jobs_leave_one(rig: Rig) -> None:
    database = rig.storage.database
    if database is None or database.kind != "postgres":
        assert await rig.store.purge_job_log(CUTOFF, 10) == 0
        return
    log_row = plain_statement(
        'INSERT INTO "pgqueuer_log" ("created", "job_id", "status", "priority", "entrypoint")'
        " VALUES (%s, %s, 'successful', 0, 'retention-test') "
    )
    for job_id, created in ((1, old(1)), (2, old(2)), (3, T0)):
        await database.execute(log_row, created, job_id)

    assert await rig.store.purge_job_log(CUTOFF, 1) == 1
    assert await rig.store.purge_job_log(CUTOFF, 5) == 1
    assert await rig.store.purge_job_log(CUTOFF, 5) == 0

    left = await database.fetch(
        plain_statement(
            'SELECT "job_id" FROM "pgqueuer_log" WHERE "entrypoint" = %s ORDER BY "job_id"'
        ),
        "retention-test",
    )
    assert [row["job_id"] for row in left] == [3]
    await database.execute(
        plain_statement('DELETE FROM "pgqueuer_log" WHERE "entrypoint" = %s'), "retention-test"
    )
