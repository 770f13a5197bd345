"""The PersonalDataRepository contract (ports/privacy.py), run against every adapter: an
export finds every record of one account naming an address and nothing of another
account's; an erasure deletes the lead, leaves the address nowhere in what the account
keeps (a digest instead, subjects cleared), keeps the suppression entry as the digest, is
all or nothing, and repeated changes nothing."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from leadmail.adapters.db.message_events import PiccoloMessageEventRepository
from leadmail.adapters.db.privacy import PiccoloPersonalData
from leadmail.adapters.memory.campaigns import MemoryCampaignRepository, MemoryRecipientRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.privacy import MemoryPersonalData
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
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
from leadmail.domain.privacy import DataSubject, Erased
from leadmail.domain.suppressions import (
    Suppression,
    SuppressionReason,
    address_digest,
    suppression_address,
)
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.privacy import PersonalDataRepository
from tests.contract.support import T0, Storage, a_campaign, a_lead, a_message, moment

ADA = "Ada@Example.com"  # as she typed it; kept case-folded
GRACE = "grace@example.com"


@dataclass
class Rig:
    storage: Storage
    events: MessageEventRepository
    data: PersonalDataRepository


@pytest.fixture
def rig(storage: Storage) -> Rig:
    if storage.database is None:
        assert isinstance(storage.leads, MemoryLeadRepository)
        assert isinstance(storage.messages, MemoryMessageRepository)
        assert isinstance(storage.campaigns, MemoryCampaignRepository)
        assert isinstance(storage.recipients, MemoryRecipientRepository)
        assert isinstance(storage.imports, MemoryLeadImportRepository)
        assert isinstance(storage.suppressions, MemorySuppressionRepository)
        events = MemoryMessageEventRepository(storage.messages)
        data: PersonalDataRepository = MemoryPersonalData(
            storage.leads,
            storage.messages,
            events,
            storage.campaigns,
            storage.recipients,
            storage.imports,
            storage.suppressions,
        )
        return Rig(storage, events, data)
    return Rig(
        storage,
        PiccoloMessageEventRepository(storage.database),
        PiccoloPersonalData(storage.database),
    )


@dataclass
class Seeded:
    account_id: str
    lead_id: str
    to_ada: Message
    to_both: Message
    to_grace: Message
    campaign_id: str
    import_id: str


async def sent(rig: Rig, message: Message, detail: str = "") -> Message:
    await rig.storage.messages.add([message])
    done = message.sent(f"pm-{message.message_id}", 1, moment(1))
    await rig.storage.messages.update([done])
    bounce = MessageEvent(
        done.message_id, done.account_id, done.provider, f"ev-{done.message_id}",
        EventType.BOUNCED, Bounce.SOFT, moment(2_000), detail,
    )  # fmt: skip
    assert await rig.events.apply(bounce, moment(2_001))
    return done


async def an_import_naming(rig: Rig, account_id: str, email: str) -> str:
    """A finished import of ``account_id`` whose row 3 was not imported: ``email``'s."""
    imports = rig.storage.imports
    receiving = ImportStatus.RECEIVING
    new = LeadImport(new_import_id(), account_id, ImportMode.CREATE, (), receiving, T0, T0)
    await imports.create(new)
    await imports.add_chunk(new.import_id, 0, f"email\nx\n{email}\n".encode())
    assert await imports.queue(new.import_id, 10, T0) is not None
    assert await imports.claim(new.import_id, "r1", moment(1)) is not None
    failed = [
        RowError(2, "email", "is not a valid email address", "x"),
        RowError(3, "tags", f"{email} has too many tags", email),
    ]
    batch = ImportBatch(
        import_id=new.import_id, account_id=account_id, runner="r1", mode=ImportMode.CREATE,
        columns=frozenset(), start=0, end=2, leads=list[ImportedRow](), failed=failed,
        skipped=(), now=moment(2),
    )  # fmt: skip
    assert await imports.write(batch) is not None
    assert await imports.finish(new.import_id, "r1", moment(3)) is not None
    return new.import_id


async def seed(rig: Rig) -> Seeded:
    """One account's records naming ADA, and GRACE's beside them."""
    storage = rig.storage
    account = await storage.new_account()
    ada = a_lead(account, email=ADA, name="Ada Lovelace", tags=("march",))
    await storage.leads.add(ada)
    await storage.leads.add(a_lead(account, email=GRACE, name="Grace", tags=("march",)))
    to_ada = await sent(
        rig,
        a_message(account, to=('"Ada Lovelace" <Ada@Example.com>',), subject="Ada, welcome"),
        detail=f"550 5.1.1 <{ADA.upper()}>: mailbox full",
    )
    both = a_message(account, to=("ada@example.com", GRACE), subject="Open", created_at=moment(5))
    to_both = await sent(rig, both)
    to_grace = await sent(rig, a_message(account, to=(GRACE,), subject="Grace only"))
    campaign = a_campaign(account, status=CampaignStatus.RUNNING)  # to Ada and Grace
    await storage.campaigns.add(campaign)
    assert await storage.recipients.freeze(campaign) == 2
    batch = await storage.recipients.lease(
        campaign.campaign_id, 10, now=moment(1), lease_until=moment(60_000)
    )
    assert batch is not None
    outcomes = [
        RecipientOutcome(r.lead_id, RecipientStatus.FAILED, f"rejected {r.email}")
        for r in batch.recipients
    ]
    assert await storage.recipients.record(batch, outcomes, moment(2)) == 2
    import_id = await an_import_naming(rig, account, ADA)
    entry = Suppression.of(
        account, suppression_address(ADA), SuppressionReason.UNSUBSCRIBED, moment(3),
        campaign_id=campaign.campaign_id,
    )  # fmt: skip
    assert (await storage.suppressions.add(entry)).written
    return Seeded(account, ada.lead_id, to_ada, to_both, to_grace, campaign.campaign_id, import_id)


async def test_an_export_finds_every_record_naming_the_address_in_its_account_only(
    rig: Rig,
) -> None:
    school = await seed(rig)
    other = await seed(rig)  # another account, the same people

    found = await rig.data.export(school.account_id, DataSubject.of("Ada <ADA@example.COM>"))

    assert found.person == DataSubject.of(ADA)
    assert found.lead is not None
    assert (found.lead.lead_id, found.lead.email, found.lead.tags) == (
        school.lead_id,
        ADA,
        ("march",),
    )
    assert [m.message.message_id for m in found.messages] == [
        school.to_both.message_id,  # newest first
        school.to_ada.message_id,
    ]
    assert all(m.message.account_id == school.account_id for m in found.messages)
    [event] = found.messages[1].events
    assert (event.type, event.bounce) == (EventType.BOUNCED, Bounce.SOFT)
    [recipient] = found.recipients
    assert (recipient.campaign_id, recipient.lead_id) == (school.campaign_id, school.lead_id)
    assert recipient.status is RecipientStatus.FAILED
    [row] = found.import_rows
    assert (row.import_id, row.row.row, row.row.email) == (school.import_id, 3, ADA)
    assert found.suppression is not None
    assert (found.suppression.account_id, found.suppression.email) == (
        school.account_id,
        "ada@example.com",
    )
    nobody = await rig.data.export(school.account_id, DataSubject.of("nobody@example.com"))
    assert (nobody.lead, nobody.messages, nobody.recipients, nobody.import_rows) == (
        None,
        (),
        (),
        (),
    )
    assert nobody.suppression is None
    theirs = await rig.data.export(other.account_id, DataSubject.of(ADA))
    assert theirs.lead is not None
    assert theirs.lead.lead_id == other.lead_id


async def test_an_erasure_leaves_a_digest_where_the_address_was_and_nothing_to_export(
    rig: Rig,
) -> None:
    school = await seed(rig)
    other = await seed(rig)
    person = DataSubject.of(ADA)
    digest = address_digest("ada@example.com")

    erased = await rig.data.erase(school.account_id, person)

    assert erased == Erased(
        person, leads=1, messages=2, events=2, campaign_recipients=1, import_errors=1,
        suppressions=1,
    )  # fmt: skip
    after = await rig.data.export(school.account_id, person)
    assert (after.lead, after.messages, after.recipients, after.import_rows) == (None, (), (), ())
    # The entry stays, as the digest: she is never mailed again.
    assert after.suppression is not None
    assert (after.suppression.email, after.suppression.digest) == (digest, digest)
    [held] = await rig.storage.suppressions.find(school.account_id, [digest])
    assert held.reason is SuppressionReason.UNSUBSCRIBED
    # The account's history keeps its shape, without her.
    messages = {
        m.message_id: m
        for m in await rig.storage.messages.get_many(
            school.account_id,
            [school.to_ada.message_id, school.to_both.message_id, school.to_grace.message_id],
        )
    }
    to_ada = messages[school.to_ada.message_id]
    assert (to_ada.to, to_ada.subject, to_ada.status) == ((digest,), "", school.to_ada.status)
    to_both = messages[school.to_both.message_id]
    assert (to_both.to, to_both.subject) == ((digest, GRACE), "")
    assert messages[school.to_grace.message_id] == school.to_grace
    [event] = await rig.events.list(school.account_id, school.to_ada.message_id)
    assert event.detail == f"550 5.1.1 <{digest}>: mailbox full"
    everyone = await rig.storage.recipients.page(school.campaign_id, None, 10)
    assert sorted(r.email for r in everyone) == sorted([digest, GRACE])
    assert {r.error for r in everyone} == {f"rejected {digest}", f"rejected {GRACE}"}
    rows = await rig.storage.imports.errors(school.account_id, school.import_id, 0, 10)
    assert [(r.email, r.message) for r in rows] == [
        ("x", "is not a valid email address"),
        (digest, f"{digest} has too many tags"),
    ]
    assert await rig.storage.leads.get(school.account_id, school.lead_id) is None
    # Another account's records of the same address are untouched.
    theirs = await rig.data.export(other.account_id, person)
    assert theirs.lead is not None
    assert (len(theirs.messages), len(theirs.recipients), len(theirs.import_rows)) == (2, 1, 1)
    assert theirs.suppression is not None
    assert theirs.suppression.email == "ada@example.com"


async def test_an_erasure_repeated_changes_nothing(rig: Rig) -> None:
    school = await seed(rig)
    person = DataSubject.of(ADA)
    await rig.data.erase(school.account_id, person)
    before = await rig.data.export(school.account_id, person)

    again = await rig.data.erase(school.account_id, person)

    assert again == Erased(person)
    assert await rig.data.export(school.account_id, person) == before
    nobody = await rig.data.erase(school.account_id, DataSubject.of("nobody@example.com"))
    assert nobody == Erased(DataSubject.of("nobody@example.com"))


async def test_no_stored_record_of_the_account_names_the_address_after_an_erasure(
    rig: Rig,
) -> None:
    # Every record of every store, read back: none of this account's kept her address (an
    # import's uploaded file included: deleted when the import finished).
    school = await seed(rig)
    ours = (school.account_id, school.campaign_id, school.import_id)

    await rig.data.erase(school.account_id, DataSubject.of(ADA))

    kept = [
        record
        for record in await every_record(rig)
        if "ada@example.com" in record.lower() and any(i.lower() in record.lower() for i in ours)
    ]
    assert kept == []


async def every_record(rig: Rig) -> list[str]:
    """Each stored record as text: a row of every table, or a value of every memory store."""
    database = rig.storage.database
    if database is None:
        storage = rig.storage
        assert isinstance(storage.imports, MemoryLeadImportRepository)
        assert isinstance(storage.recipients, MemoryRecipientRepository)
        assert isinstance(rig.events, MemoryMessageEventRepository)
        stores = [
            vars(storage.leads)["_leads"],
            vars(storage.messages)["_records"],
            vars(rig.events)["_events"],
            vars(storage.suppressions)["_entries"],
            vars(storage.recipients)["_rows"],
            vars(storage.imports)["_errors"],
            vars(storage.imports)["_chunks"],
        ]
        return [f"{key!r}: {value!r}" for store in stores for key, value in store.items()]
    records: list[str] = []
    for field in dataclasses.fields(database.tables):
        table = getattr(database.tables, field.name)
        records += [f"{field.name}: {row!r}" for row in await table.select()]
    return records
