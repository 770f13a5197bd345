"""The LeadRepository contract (ports/leads.py), run against every adapter."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from leadmail.domain.lead_listing import LeadQuery, PageCursor
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.ports.errors import DuplicateLead
from tests.contract.support import T0, Storage, a_lead, is_utc, moment, unique_lead_id


def newest_first(leads: list[Lead]) -> list[str]:
    return [
        lead.lead_id
        for lead in sorted(leads, key=lambda lead: (lead.created_at, lead.lead_id), reverse=True)
    ]


def ids(leads: list[Lead]) -> list[str]:
    return [lead.lead_id for lead in leads]


def where(*, limit: int = 50, after: PageCursor | None = None, **equals: str) -> LeadQuery:
    """A listing of the leads whose attributes have these values."""
    return LeadQuery(limit=limit, after=after, filter=LeadFilter(equals=tuple(equals.items())))


async def add_all(storage: Storage, leads: list[Lead]) -> None:
    for lead in leads:
        await storage.leads.add(lead)


class TestLeadRepositoryContract:
    # --- add and get -------------------------------------------------------------------

    async def test_add_then_get_preserves_every_field(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = a_lead(
            account,
            name="Zoë O'Brien-Łukasiewicz",
            email="Zoe.OBrien@example.com",
            source='Webinar "Intro" 100%_off',
            note="Line one\nLine two — ✓ <b>&amp;</b> ' \" \\ %_\ttab",
            phone="+44 (20) 7946-0958.",
            created_at=T0,
            updated_at=datetime(2026, 11, 23, 8, 0, 0, tzinfo=UTC),  # whole second
        )

        added = await storage.leads.add(lead)
        fetched = await storage.leads.get(account, lead.lead_id)

        assert added == lead
        assert fetched == lead
        assert fetched is not None
        assert is_utc(fetched.created_at)
        assert is_utc(fetched.updated_at)
        # Equality of aware datetimes ignores the zone; the exact text does not.
        assert fetched.created_at.isoformat() == "2026-11-22T10:15:30.123000+00:00"
        assert fetched.updated_at.isoformat() == "2026-11-23T08:00:00+00:00"

    async def test_get_of_an_unknown_lead_is_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        await storage.leads.add(a_lead(account))

        assert await storage.leads.get(account, unique_lead_id()) is None

    # --- uniqueness of the email key -----------------------------------------------------

    async def test_get_many_finds_the_accounts_leads_by_id_and_leaves_out_the_rest(
        self, storage: Storage
    ) -> None:
        account, other = await storage.new_account(), await storage.new_account()
        mine = [a_lead(account, email=f"many{n}@example.com", fields={"n": n}) for n in range(3)]
        theirs = a_lead(other, email="theirs@example.com")
        await add_all(storage, [*mine, theirs])
        wanted = [mine[2].lead_id, theirs.lead_id, mine[0].lead_id, unique_lead_id()]

        found = await storage.leads.get_many(account, wanted)

        assert found == {mine[2].lead_id: mine[2], mine[0].lead_id: mine[0]}
        assert await storage.leads.get_many(account, []) == {}

    async def test_add_with_a_taken_email_key_raises_duplicate_lead_naming_the_owner(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        first = await storage.leads.add(a_lead(account, email="ada@example.com"))
        clash = a_lead(account, email="ADA@example.com", created_at=moment(1000))

        with pytest.raises(DuplicateLead) as caught:
            await storage.leads.add(clash)

        assert caught.value.existing_lead_id == first.lead_id
        assert await storage.leads.get(account, clash.lead_id) is None
        assert ids(await storage.leads.list(account, LeadQuery())) == [first.lead_id]

    async def test_the_same_email_in_another_account_is_not_a_duplicate(
        self, storage: Storage
    ) -> None:
        one, other = await storage.new_account(), await storage.new_account()
        first = await storage.leads.add(a_lead(one, email="ada@example.com"))
        second = await storage.leads.add(a_lead(other, email="ada@example.com"))

        assert await storage.leads.get(one, first.lead_id) == first
        assert await storage.leads.get(other, second.lead_id) == second

    # --- replace -------------------------------------------------------------------------

    async def test_replace_overwrites_the_client_fields_and_updated_at(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        original = await storage.leads.add(
            a_lead(account, name="Ada", email="ada@example.com", source="webinar", note="one")
        )
        changed = dataclasses.replace(
            original,
            name="Ada L.",
            email="Ada.L@example.org",
            source="podcast",
            note="two\nlines",
            phone="+1 555 0100",
            updated_at=moment(5_001),
        )

        result = await storage.leads.replace(changed)

        assert result == changed
        stored = await storage.leads.get(account, original.lead_id)
        assert stored == changed
        assert stored is not None
        assert is_utc(stored.updated_at)
        # The email key moved with the email: the old address is free, the new one taken.
        freed = await storage.leads.add(a_lead(account, email="ada@example.com"))
        assert await storage.leads.get(account, freed.lead_id) == freed
        with pytest.raises(DuplicateLead) as caught:
            await storage.leads.add(a_lead(account, email="ada.l@example.org"))
        assert caught.value.existing_lead_id == original.lead_id

    async def test_replace_never_changes_created_at(self, storage: Storage) -> None:
        account = await storage.new_account()
        original = await storage.leads.add(a_lead(account, created_at=T0))
        changed = dataclasses.replace(
            original, name="Renamed", created_at=moment(-86_400_000), updated_at=moment(1)
        )

        result = await storage.leads.replace(changed)
        stored = await storage.leads.get(account, original.lead_id)

        # Only the client fields and updated_at are overwritten (ports/leads.py).
        assert stored is not None
        assert stored.name == "Renamed"
        assert stored.created_at == original.created_at
        assert result == stored

    async def test_replace_keeping_its_own_email_in_another_case_is_allowed(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        original = await storage.leads.add(a_lead(account, email="ada@example.com"))
        changed = dataclasses.replace(original, email="ADA@example.com", updated_at=moment(1))

        assert await storage.leads.replace(changed) == changed
        assert await storage.leads.get(account, original.lead_id) == changed

    async def test_replace_of_a_missing_lead_returns_none_and_stores_nothing(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        ghost = a_lead(account)

        assert await storage.leads.replace(ghost) is None
        assert await storage.leads.get(account, ghost.lead_id) is None
        assert await storage.leads.list(account, LeadQuery()) == []

    async def test_replace_of_another_accounts_lead_returns_none_and_changes_nothing(
        self, storage: Storage
    ) -> None:
        owner, intruder = await storage.new_account(), await storage.new_account()
        lead = await storage.leads.add(a_lead(owner, name="Ada"))
        hijack = dataclasses.replace(
            lead, account_id=intruder, name="Mallory", updated_at=moment(1)
        )

        assert await storage.leads.replace(hijack) is None
        assert await storage.leads.get(owner, lead.lead_id) == lead
        assert await storage.leads.get(intruder, lead.lead_id) is None

    async def test_replace_onto_a_taken_email_raises_and_leaves_the_row_unchanged(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        ada = await storage.leads.add(a_lead(account, name="Ada", email="ada@example.com"))
        bob = await storage.leads.add(a_lead(account, name="Bob", email="bob@example.com"))
        collide = dataclasses.replace(
            bob, name="Bob Two", email="Ada@example.com", note="x", updated_at=moment(9)
        )

        with pytest.raises(DuplicateLead) as caught:
            await storage.leads.replace(collide)

        assert caught.value.existing_lead_id == ada.lead_id
        assert await storage.leads.get(account, bob.lead_id) == bob  # no half-write
        assert await storage.leads.get(account, ada.lead_id) == ada

    # --- delete --------------------------------------------------------------------------

    async def test_delete_returns_true_then_false(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account))
        keep = await storage.leads.add(a_lead(account))

        assert await storage.leads.delete(account, lead.lead_id) is True
        assert await storage.leads.get(account, lead.lead_id) is None
        assert await storage.leads.delete(account, lead.lead_id) is False
        assert await storage.leads.get(account, keep.lead_id) == keep

    async def test_a_deleted_leads_email_can_be_added_again(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, email="ada@example.com"))
        await storage.leads.delete(account, lead.lead_id)

        again = await storage.leads.add(a_lead(account, email="ada@example.com"))

        assert ids(await storage.leads.list(account, LeadQuery())) == [again.lead_id]

    # --- list ----------------------------------------------------------------------------

    async def test_list_is_newest_first_and_ties_on_created_at_break_by_lead_id(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        tied = [a_lead(account, created_at=moment(1_000)) for _ in range(3)]
        leads = [
            a_lead(account, created_at=moment(0)),
            tied[0],
            a_lead(account, created_at=moment(3_000)),
            tied[1],
            a_lead(account, created_at=moment(1_001)),  # one millisecond later than the ties
            tied[2],
            a_lead(account, created_at=moment(-1)),
        ]
        await add_all(storage, leads)

        rows = await storage.leads.list(account, LeadQuery(limit=100))

        assert ids(rows) == newest_first(leads)
        tie_order = [lead_id for lead_id in ids(rows) if lead_id in {t.lead_id for t in tied}]
        assert tie_order == sorted(tie_order, reverse=True)
        assert rows == sorted(leads, key=lambda lead: (lead.created_at, lead.lead_id))[::-1]

    async def test_list_returns_at_most_limit_plus_one_rows(self, storage: Storage) -> None:
        account = await storage.new_account()
        leads = [a_lead(account, created_at=moment(i)) for i in range(5)]
        await add_all(storage, leads)
        expected = newest_first(leads)

        assert ids(await storage.leads.list(account, LeadQuery(limit=1))) == expected[:2]
        assert ids(await storage.leads.list(account, LeadQuery(limit=2))) == expected[:3]
        assert ids(await storage.leads.list(account, LeadQuery(limit=4))) == expected
        assert ids(await storage.leads.list(account, LeadQuery(limit=100))) == expected

    async def test_list_after_a_cursor_is_strictly_after_it(self, storage: Storage) -> None:
        account = await storage.new_account()
        leads = [a_lead(account, created_at=moment(i // 2)) for i in range(6)]  # pairs tie
        await add_all(storage, leads)
        expected = newest_first(leads)
        by_id = {lead.lead_id: lead for lead in leads}

        for position, lead_id in enumerate(expected):
            cursor = PageCursor(by_id[lead_id].created_at, lead_id)
            rows = await storage.leads.list(account, LeadQuery(limit=100, after=cursor))
            assert ids(rows) == expected[position + 1 :]

    async def test_a_cursor_need_not_name_a_stored_lead(self, storage: Storage) -> None:
        account = await storage.new_account()
        leads = [a_lead(account, created_at=moment(i)) for i in range(4)]
        await add_all(storage, leads)
        expected = newest_first(leads)

        between = PageCursor(moment(2), "ld_")  # before every id at moment(2)
        rows = await storage.leads.list(account, LeadQuery(limit=100, after=between))

        assert ids(rows) == expected[2:]

    async def test_paging_with_cursors_visits_every_lead_once_in_order(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        leads = [a_lead(account, created_at=moment(i // 3)) for i in range(10)]  # ties of 3
        await add_all(storage, leads)

        seen: list[str] = []
        after: PageCursor | None = None
        for _ in range(len(leads)):
            rows = await storage.leads.list(account, LeadQuery(limit=2, after=after))
            assert len(rows) <= 3
            page = rows[:2]
            seen.extend(ids(page))
            if len(rows) <= 2:
                break
            after = PageCursor(page[-1].created_at, page[-1].lead_id)

        assert seen == newest_first(leads)

    async def test_list_filters_by_exact_email_key_and_exact_source(self, storage: Storage) -> None:
        account = await storage.new_account()
        ada = a_lead(account, email="Ada@example.com", source="webinar", created_at=moment(4))
        bob = a_lead(account, email="bob@example.com", source="webinar", created_at=moment(3))
        cy = a_lead(account, email="cy@example.com", source="Webinar", created_at=moment(2))
        dee = a_lead(account, email="dee@example.com", source="", created_at=moment(1))
        await add_all(storage, [ada, bob, cy, dee])

        async def listed(query: LeadQuery) -> list[str]:
            return ids(await storage.leads.list(account, query))

        assert await listed(where(email_key="ada@example.com")) == [ada.lead_id]
        assert await listed(where(email_key="Ada@example.com")) == []  # a key is lower-case
        assert await listed(where(email_key="ada@example")) == []
        assert await listed(where(source="webinar")) == [ada.lead_id, bob.lead_id]
        assert await listed(where(source="Webinar")) == [cy.lead_id]
        assert await listed(where(source="")) == [dee.lead_id]
        assert await listed(where(source="webin")) == []
        assert await listed(where(email_key="bob@example.com", source="webinar")) == [bob.lead_id]
        assert await listed(where(email_key="cy@example.com", source="webinar")) == []
        # Filters combine with the cursor and the limit.
        after_ada = PageCursor(ada.created_at, ada.lead_id)
        assert await listed(where(after=after_ada, source="webinar")) == [bob.lead_id]
        assert await listed(where(limit=1, source="")) == [dee.lead_id]

    async def test_list_filters_by_exact_phone(self, storage: Storage) -> None:
        account = await storage.new_account()
        ada = a_lead(account, phone="+44 20 7946 0958", created_at=moment(3))
        bob = a_lead(account, phone="+442079460958", created_at=moment(2))
        cy = a_lead(account, created_at=moment(1))
        await add_all(storage, [ada, bob, cy])

        async def listed(query: LeadQuery) -> list[str]:
            return ids(await storage.leads.list(account, query))

        assert await listed(where(phone="+44 20 7946 0958")) == [ada.lead_id]
        assert await listed(where(phone="+442079460958")) == [bob.lead_id]  # as typed
        assert await listed(where(phone="")) == [cy.lead_id]
        assert await listed(where(phone="7946")) == []

    # --- accounts are walls --------------------------------------------------------------

    async def test_another_account_never_sees_a_lead(self, storage: Storage) -> None:
        owner, other = await storage.new_account(), await storage.new_account()
        leads = [
            a_lead(owner, email="ada@example.com", created_at=moment(1)),
            a_lead(owner, email="bob@example.com", created_at=moment(2)),
        ]
        await add_all(storage, leads)

        assert await storage.leads.list(other, LeadQuery(limit=100)) == []
        assert await storage.leads.list(other, where(email_key="ada@example.com")) == []
        assert await storage.leads.list(other, where(source="webinar")) == []
        for lead in leads:
            assert await storage.leads.get(other, lead.lead_id) is None
            assert await storage.leads.delete(other, lead.lead_id) is False
            assert await storage.leads.replace(dataclasses.replace(lead, account_id=other)) is None
        assert ids(await storage.leads.list(owner, LeadQuery(limit=100))) == newest_first(leads)
        for lead in leads:
            assert await storage.leads.get(owner, lead.lead_id) == lead
