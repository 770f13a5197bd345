"""LeadService on the memory repository, with a fake clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.errors import LeadNotFound
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead, LeadChanges, LeadFields
from leadmail.ports.errors import DuplicateLead
from leadmail.services.leads import LeadService
from tests.unit.fakes import START, FakeClock

ACME = "acc_acme"
GLOBEX = "acc_globex"


def fields(n: int, *, source: str = "") -> LeadFields:
    return LeadFields.parse(name=f"Lead {n}", email=f"lead{n}@example.com", source=source)


async def add_many(service: LeadService, account_id: str, count: int) -> list[Lead]:
    return [await service.add(account_id, fields(n)) for n in range(count)]


async def list_all(
    service: LeadService, account_id: str, limit: int, *, source: str | None = None
) -> list[Lead]:
    """Follow next_cursor to the end, checking each page's size on the way."""
    seen: list[Lead] = []
    cursor: str | None = None
    for _ in range(1000):
        page = await service.list(
            account_id, LeadQuery.parse(limit=limit, cursor=cursor, source=source)
        )
        assert len(page.leads) <= limit
        seen.extend(page.leads)
        if page.next_cursor is None:
            return seen
        assert len(page.leads) == limit, "only the last page may be short"
        cursor = page.next_cursor
    raise AssertionError("pagination did not end")


# --- add and get --------------------------------------------------------------------


async def test_add_stores_the_fields_in_the_account(
    lead_service: LeadService, clock: FakeClock
) -> None:
    lead = await lead_service.add(
        ACME,
        LeadFields.parse(name=" Ada ", email="Ada@Example.com", source="web", note="hi"),
    )

    assert lead.lead_id.startswith("ld_")
    assert (lead.account_id, lead.name, lead.email, lead.source, lead.note) == (
        ACME,
        "Ada",
        "Ada@example.com",
        "web",
        "hi",
    )
    assert lead.created_at == lead.updated_at == START
    assert await lead_service.get(ACME, lead.lead_id) == lead


async def test_each_lead_gets_its_own_id(lead_service: LeadService) -> None:
    leads = await add_many(lead_service, ACME, 20)

    assert len({lead.lead_id for lead in leads}) == 20


async def test_get_unknown_lead_is_not_found(lead_service: LeadService) -> None:
    with pytest.raises(LeadNotFound) as caught:
        await lead_service.get(ACME, "ld_missing")

    assert caught.value.lead_id == "ld_missing"


async def test_duplicate_email_in_an_account_is_refused_whatever_the_case(
    lead_service: LeadService,
) -> None:
    first = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))

    with pytest.raises(DuplicateLead) as caught:
        await lead_service.add(ACME, LeadFields.parse(name="Ada 2", email="ADA@Example.COM"))

    assert caught.value.existing_lead_id == first.lead_id
    assert [lead.lead_id for lead in (await lead_service.list(ACME, LeadQuery())).leads] == [
        first.lead_id
    ]


async def test_same_email_in_two_accounts_is_fine(lead_service: LeadService) -> None:
    acme = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))
    globex = await lead_service.add(GLOBEX, LeadFields.parse(name="Ada", email="ada@example.com"))

    assert acme.lead_id != globex.lead_id
    assert await lead_service.get(ACME, acme.lead_id) == acme
    assert await lead_service.get(GLOBEX, globex.lead_id) == globex


async def test_email_freed_by_a_delete_can_be_reused(lead_service: LeadService) -> None:
    first = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))
    await lead_service.delete(ACME, first.lead_id)

    second = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))

    assert second.lead_id != first.lead_id


# --- update -------------------------------------------------------------------------


async def test_update_changes_only_the_given_fields(
    lead_service: LeadService, clock: FakeClock
) -> None:
    lead = await lead_service.add(
        ACME, LeadFields.parse(name="Ada", email="ada@example.com", source="web", note="n")
    )
    clock.advance(timedelta(hours=1))

    updated = await lead_service.update(ACME, lead.lead_id, LeadChanges.parse(source="ads"))

    assert updated.source == "ads"
    assert (updated.name, updated.email, updated.note) == ("Ada", "ada@example.com", "n")
    assert updated.created_at == lead.created_at
    assert updated.updated_at > lead.updated_at
    assert await lead_service.get(ACME, lead.lead_id) == updated


async def test_update_can_change_the_case_of_its_own_email(lead_service: LeadService) -> None:
    lead = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))

    updated = await lead_service.update(
        ACME, lead.lead_id, LeadChanges.parse(email="Ada@example.com")
    )

    assert updated.email == "Ada@example.com"


async def test_update_to_another_leads_email_is_refused_and_changes_nothing(
    lead_service: LeadService,
) -> None:
    ada = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))
    bob = await lead_service.add(ACME, LeadFields.parse(name="Bob", email="bob@example.com"))

    with pytest.raises(DuplicateLead) as caught:
        await lead_service.update(
            ACME, bob.lead_id, LeadChanges.parse(name="Robert", email="ADA@example.com")
        )

    assert caught.value.existing_lead_id == ada.lead_id
    assert await lead_service.get(ACME, ada.lead_id) == ada
    assert await lead_service.get(ACME, bob.lead_id) == bob


async def test_update_to_an_email_used_in_another_account_is_fine(
    lead_service: LeadService,
) -> None:
    await lead_service.add(GLOBEX, LeadFields.parse(name="Ada", email="ada@example.com"))
    bob = await lead_service.add(ACME, LeadFields.parse(name="Bob", email="bob@example.com"))

    updated = await lead_service.update(
        ACME, bob.lead_id, LeadChanges.parse(email="ada@example.com")
    )

    assert updated.email == "ada@example.com"


async def test_update_unknown_lead_is_not_found(lead_service: LeadService) -> None:
    with pytest.raises(LeadNotFound):
        await lead_service.update(ACME, "ld_missing", LeadChanges.parse(name="X"))


# --- delete -------------------------------------------------------------------------


async def test_a_deleted_lead_is_gone(lead_service: LeadService) -> None:
    lead = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))

    await lead_service.delete(ACME, lead.lead_id)

    with pytest.raises(LeadNotFound):
        await lead_service.get(ACME, lead.lead_id)
    assert (await lead_service.list(ACME, LeadQuery())).leads == []


async def test_deleting_twice_is_not_found(lead_service: LeadService) -> None:
    lead = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="ada@example.com"))
    await lead_service.delete(ACME, lead.lead_id)

    with pytest.raises(LeadNotFound) as caught:
        await lead_service.delete(ACME, lead.lead_id)

    assert caught.value.lead_id == lead.lead_id


# --- accounts do not see each other -------------------------------------------------


async def test_another_accounts_lead_is_not_found_and_stays_intact(
    lead_service: LeadService,
) -> None:
    theirs = await lead_service.add(GLOBEX, LeadFields.parse(name="Ada", email="ada@example.com"))

    with pytest.raises(LeadNotFound):
        await lead_service.get(ACME, theirs.lead_id)
    with pytest.raises(LeadNotFound):
        await lead_service.update(ACME, theirs.lead_id, LeadChanges.parse(name="Mallory"))
    with pytest.raises(LeadNotFound):
        await lead_service.delete(ACME, theirs.lead_id)

    assert await lead_service.get(GLOBEX, theirs.lead_id) == theirs


async def test_another_accounts_leads_are_invisible_in_lists(lead_service: LeadService) -> None:
    ours = await add_many(lead_service, ACME, 3)
    await add_many(lead_service, GLOBEX, 4)

    listed = await list_all(lead_service, ACME, limit=2)

    assert {lead.lead_id for lead in listed} == {lead.lead_id for lead in ours}
    assert all(lead.account_id == ACME for lead in listed)
    assert (await lead_service.list("acc_nobody", LeadQuery())).leads == []


async def test_another_accounts_email_filter_finds_nothing_of_theirs(
    lead_service: LeadService,
) -> None:
    await lead_service.add(GLOBEX, LeadFields.parse(name="Ada", email="ada@example.com"))

    page = await lead_service.list(ACME, LeadQuery.parse(email="ada@example.com"))

    assert page.leads == []


# --- list ---------------------------------------------------------------------------


async def test_list_is_newest_first(lead_service: LeadService) -> None:
    leads = await add_many(lead_service, ACME, 5)

    page = await lead_service.list(ACME, LeadQuery.parse(limit=10))

    assert [lead.lead_id for lead in page.leads] == [lead.lead_id for lead in reversed(leads)]
    assert page.next_cursor is None


async def test_updating_a_lead_does_not_move_it_in_the_list(
    lead_service: LeadService, clock: FakeClock
) -> None:
    leads = await add_many(lead_service, ACME, 3)
    clock.advance(timedelta(days=1))
    await lead_service.update(ACME, leads[0].lead_id, LeadChanges.parse(note="touched"))

    page = await lead_service.list(ACME, LeadQuery())

    assert [lead.lead_id for lead in page.leads] == [lead.lead_id for lead in reversed(leads)]


@pytest.mark.parametrize(
    ("count", "limit"), [(1, 1), (7, 3), (9, 3), (10, 1), (25, 7), (101, 100), (100, 100)]
)
async def test_paging_visits_every_lead_once_in_order(
    lead_service: LeadService, count: int, limit: int
) -> None:
    leads = await add_many(lead_service, ACME, count)

    listed = await list_all(lead_service, ACME, limit=limit)

    assert [lead.lead_id for lead in listed] == [lead.lead_id for lead in reversed(leads)]


async def test_paging_is_stable_when_leads_share_a_timestamp(
    lead_repository: MemoryLeadRepository,
) -> None:
    events = MemoryLeadEventRepository(lead_repository)
    service = LeadService(lead_repository, events, clock=FakeClock())  # time stands still
    leads = await add_many(service, ACME, 11)

    listed = await list_all(service, ACME, limit=4)

    assert len({lead.created_at for lead in listed}) == 1
    assert sorted(lead.lead_id for lead in listed) == sorted(lead.lead_id for lead in leads)
    assert len(listed) == 11


async def test_paging_is_not_disturbed_by_leads_added_meanwhile(
    lead_service: LeadService,
) -> None:
    leads = await add_many(lead_service, ACME, 6)
    first = await lead_service.list(ACME, LeadQuery.parse(limit=3))
    assert first.next_cursor is not None

    await lead_service.add(ACME, fields(99))  # newer than everything: belongs before page 1
    second = await lead_service.list(ACME, LeadQuery.parse(limit=3, cursor=first.next_cursor))

    expected = [lead.lead_id for lead in reversed(leads)]
    assert [lead.lead_id for lead in first.leads + second.leads] == expected
    assert second.next_cursor is None


async def test_paging_continues_after_the_cursor_lead_is_deleted(
    lead_service: LeadService,
) -> None:
    leads = await add_many(lead_service, ACME, 6)
    first = await lead_service.list(ACME, LeadQuery.parse(limit=3))
    assert first.next_cursor is not None

    await lead_service.delete(ACME, first.leads[-1].lead_id)
    second = await lead_service.list(ACME, LeadQuery.parse(limit=3, cursor=first.next_cursor))

    assert [lead.lead_id for lead in second.leads] == [lead.lead_id for lead in leads[2::-1]]


async def test_email_filter_is_case_insensitive(lead_service: LeadService) -> None:
    await add_many(lead_service, ACME, 3)
    ada = await lead_service.add(ACME, LeadFields.parse(name="Ada", email="Ada@Example.com"))

    page = await lead_service.list(ACME, LeadQuery.parse(email=" ada@EXAMPLE.com "))

    assert page.leads == [ada]


async def test_email_filter_with_an_invalid_address_finds_nothing(
    lead_service: LeadService,
) -> None:
    await add_many(lead_service, ACME, 3)

    page = await lead_service.list(ACME, LeadQuery.parse(email="not an email"))

    assert page.leads == []


async def test_source_filter_with_paging(lead_service: LeadService) -> None:
    webinar = [await lead_service.add(ACME, fields(n, source="webinar")) for n in range(5)]
    for n in range(5, 10):
        await lead_service.add(ACME, fields(n, source="ads"))

    listed = await list_all(lead_service, ACME, limit=2, source="webinar")

    assert [lead.lead_id for lead in listed] == [lead.lead_id for lead in reversed(webinar)]


async def test_source_filter_is_exact(lead_service: LeadService) -> None:
    await lead_service.add(ACME, fields(1, source="Webinar"))
    await lead_service.add(ACME, fields(2, source="webinar-2"))

    assert (await lead_service.list(ACME, LeadQuery.parse(source="webinar"))).leads == []


async def test_empty_account_lists_nothing(lead_service: LeadService) -> None:
    page = await lead_service.list(ACME, LeadQuery())

    assert page.leads == []
    assert page.next_cursor is None
