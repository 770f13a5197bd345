"""The LeadEventRepository contract (ports/lead_events.py), on memory, SQLite and Postgres:
events read back newest first, a page at a time, from a position of their own or of
another source's entry at the same moment; one account's only; gone with their lead; and
the events an import's batch writes."""

from __future__ import annotations

from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import AFTER_EVERY_ID, LeadEvent, LeadEventKind
from tests.contract.support import Storage, a_lead, moment
from tests.contract.test_lead_imports import all_leads, batch, started

K = LeadEventKind


async def events_of(storage: Storage, account: str, lead_id: str, **kw: object) -> list[LeadEvent]:
    return await storage.lead_events.newest(account, lead_id, 100, **kw)  # type: ignore[arg-type]


async def test_events_come_back_whole_newest_first_from_any_position(storage: Storage) -> None:
    account = await storage.new_account()
    lead = await storage.leads.add(a_lead(account))
    other = await storage.leads.add(a_lead(account))
    written = [
        LeadEvent(account, lead.lead_id, K.UPDATED, moment(1), {"fields": ["name", "fields.city"]}),
        LeadEvent(account, lead.lead_id, K.TAGS_CHANGED, moment(2),
                  {"add": ["vip"], "remove": []}),
        LeadEvent(account, lead.lead_id, K.UPDATED, moment(2), {"fields": ["note"]}),
        LeadEvent(account, other.lead_id, K.UPDATED, moment(3), {"fields": ["phone"]}),
    ]  # fmt: skip

    await storage.lead_events.add(written[:2])
    await storage.lead_events.add(written[2:])

    found = await events_of(storage, account, lead.lead_id)
    assert [(e.kind, e.at, dict(e.detail)) for e in found] == [
        (K.UPDATED, moment(2), {"fields": ["note"]}),  # of one moment: the later written
        (K.TAGS_CHANGED, moment(2), {"add": ["vip"], "remove": []}),
        (K.UPDATED, moment(1), {"fields": ["name", "fields.city"]}),
    ]
    assert found[0].event_id > found[1].event_id > found[2].event_id > 0
    assert all((e.account_id, e.lead_id) == (account, lead.lead_id) for e in found)
    # After the newest: its own position; "~" takes all of a moment, "" (or "0") none.
    after_first = PageCursor(moment(2), found[0].position)
    assert await events_of(storage, account, lead.lead_id, after=after_first) == found[1:]
    every = PageCursor(moment(2), AFTER_EVERY_ID)
    assert await events_of(storage, account, lead.lead_id, after=every) == found
    assert await events_of(storage, account, lead.lead_id, after=PageCursor(moment(2), "")) == [
        found[2]
    ]
    assert await events_of(storage, account, lead.lead_id, after=PageCursor(moment(2), "0")) == [
        found[2]
    ]
    assert await storage.lead_events.newest(account, lead.lead_id, 1) == found[:1]


async def test_events_are_the_accounts_own_and_go_with_their_lead(storage: Storage) -> None:
    account = await storage.new_account()
    stranger = await storage.new_account()
    lead = await storage.leads.add(a_lead(account))
    event = LeadEvent(account, lead.lead_id, K.UPDATED, moment(1), {"fields": ["name"]})
    await storage.lead_events.add([event])

    assert await events_of(storage, stranger, lead.lead_id) == []
    assert await storage.leads.delete(account, lead.lead_id)
    assert await events_of(storage, account, lead.lead_id) == []
    # An event of a lead deleted meanwhile is dropped, not an error.
    await storage.lead_events.add([event])
    assert await events_of(storage, account, lead.lead_id) == []


async def test_an_import_batch_writes_each_leads_imported_event(storage: Storage) -> None:
    lead_import = await started(storage)
    account = lead_import.account_id
    stored = await storage.leads.add(a_lead(account, email="ada@example.com"))
    incoming = [
        a_lead(account, email="ada@example.com", name="Ada L", created_at=moment(5)),
        a_lead(account, email="grace@example.com", name="Grace", created_at=moment(5)),
    ]

    assert await storage.imports.write(batch(lead_import, incoming)) is not None

    by_email = {lead.email_key: lead for lead in await all_leads(storage, account)}
    [ada] = await events_of(storage, account, stored.lead_id)
    [grace] = await events_of(storage, account, by_email["grace@example.com"].lead_id)
    assert (ada.kind, ada.at, dict(ada.detail)) == (
        K.IMPORTED,
        moment(5),
        {"import_id": lead_import.import_id, "created": False},
    )
    assert (grace.kind, dict(grace.detail)) == (
        K.IMPORTED,
        {"import_id": lead_import.import_id, "created": True},
    )
