"""The LeadRepository contract for tags, custom fields and segments (ports/leads.py), run
against every adapter: memory, SQLite and Postgres."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

import pytest

from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.domain.lead_listing import LeadQuery, PageCursor
from leadmail.domain.leads import Lead, LeadChanges, LeadFields
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS, TagChange, TooManyTags
from leadmail.ports.leads import LeadRepository
from leadmail.services.leads import LeadService
from tests.contract.support import T0, Storage, a_lead, moment


def ids(leads: list[Lead]) -> list[str]:
    return [lead.lead_id for lead in leads]


async def segment(storage: Storage, account: str, **filters: Any) -> list[str]:
    """The ids of the segment's leads, newest first, checked against its count."""
    wanted = LeadFilter(**filters)
    rows = await storage.leads.list(account, LeadQuery(limit=100, filter=wanted))
    assert await storage.leads.count(account, wanted) == len(rows)
    return ids(rows)


@pytest.fixture
async def school(storage: Storage) -> tuple[str, dict[str, Lead]]:
    """An account of five leads with tags and custom fields, one a minute apart."""
    account = await storage.new_account()
    leads = {
        "ada": a_lead(account, created_at=moment(5), source="web", tags=("evening", "vip"),
                      fields={"city": "Leeds", "age": 34, "newsletter": True}),
        "bob": a_lead(account, created_at=moment(4), tags=("evening",),
                      fields={"city": "York", "age": 34.0, "newsletter": False}),
        "cy": a_lead(account, created_at=moment(3), tags=("weekend", "vip"),
                     fields={"city": "leeds", "age": "34", "score": 1}),
        "dee": a_lead(account, created_at=moment(2), tags=(),
                      fields={"newsletter": "true", "score": True}),
        "eve": a_lead(account, created_at=moment(1), tags=("city: leeds", "march-cohort")),
    }  # fmt: skip
    for lead in leads.values():
        await storage.leads.add(lead)
    return account, leads


class TestTagsAndFieldsAreStored:
    async def test_tags_and_fields_survive_add_get_and_list(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = a_lead(
            account,
            tags=("a:b", "evening class", "x.y_z-1"),
            fields={"city": 'Zoë\'s "town"', "age": 34, "ratio": 0.25, "ok": True, "no": False},
        )

        await storage.leads.add(lead)

        assert await storage.leads.get(account, lead.lead_id) == lead
        [listed] = await storage.leads.list(account, LeadQuery())
        assert listed == lead
        assert type(listed.fields["ok"]) is bool
        assert type(listed.fields["age"]) is int

    async def test_a_lead_without_them_has_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account))

        stored = await storage.leads.get(account, lead.lead_id)

        assert stored is not None
        assert (stored.tags, dict(stored.fields)) == ((), {})

    async def test_replace_writes_tags_and_fields(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, tags=("a",), fields={"k": 1}))
        changed = dataclasses.replace(
            lead, tags=("b", "c"), fields={"j": "x"}, updated_at=moment(9)
        )

        assert await storage.leads.replace(changed) == changed
        assert await storage.leads.get(account, lead.lead_id) == changed


class TestConditionalReplace:
    async def test_it_writes_while_the_lead_is_as_read(self, storage: Storage) -> None:
        account = await storage.new_account()
        read = await storage.leads.add(a_lead(account, tags=("a",), fields={"k": 1}))
        changed = dataclasses.replace(read, fields={"k": 2}, updated_at=moment(7))

        assert await storage.leads.replace(changed, expected=read) == changed
        assert await storage.leads.get(account, read.lead_id) == changed

    async def test_it_refuses_once_the_tags_moved(self, storage: Storage) -> None:
        account = await storage.new_account()
        read = await storage.leads.add(a_lead(account, tags=("a",)))
        await storage.leads.change_tags(account, read.lead_id, TagChange(add=("b",)), T0)
        stale = dataclasses.replace(read, note="lost?", updated_at=moment(7))

        assert await storage.leads.replace(stale, expected=read) is None
        stored = await storage.leads.get(account, read.lead_id)
        assert stored is not None
        assert (stored.tags, stored.note) == (("a", "b"), read.note)

    async def test_it_refuses_once_the_fields_or_updated_at_moved(self, storage: Storage) -> None:
        account = await storage.new_account()
        read = await storage.leads.add(a_lead(account, fields={"n": 1}))
        other = dataclasses.replace(read, fields={"n": True})  # true is not 1
        await storage.leads.replace(other)
        stale = dataclasses.replace(read, note="lost?", updated_at=moment(7))

        assert await storage.leads.replace(stale, expected=read) is None
        assert await storage.leads.get(account, read.lead_id) == other
        later = dataclasses.replace(other, updated_at=moment(8))
        await storage.leads.replace(later)
        assert await storage.leads.replace(stale, expected=other) is None

    async def test_it_is_none_for_a_missing_lead(self, storage: Storage) -> None:
        account = await storage.new_account()
        ghost = a_lead(account)

        assert await storage.leads.replace(ghost, expected=ghost) is None
        assert await storage.leads.get(account, ghost.lead_id) is None


class TestUpdate:
    async def test_it_writes_the_change_of_the_lead_as_stored(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, tags=("a",), fields={"k": 1}))
        await storage.leads.change_tags(account, lead.lead_id, TagChange(add=("b",)), T0)

        def change(current: Lead) -> Lead:
            return dataclasses.replace(current, note="n", updated_at=moment(9))

        updated = await storage.leads.update(account, lead.lead_id, change)

        assert updated is not None
        assert (updated.tags, updated.note, updated.updated_at) == (("a", "b"), "n", moment(9))
        assert await storage.leads.get(account, lead.lead_id) == updated

    async def test_a_missing_or_foreign_lead_is_none(self, storage: Storage) -> None:
        owner, other = await storage.new_account(), await storage.new_account()
        lead = await storage.leads.add(a_lead(owner))

        assert await storage.leads.update(other, lead.lead_id, lambda current: current) is None
        assert await storage.leads.update(owner, "ld_none", lambda current: current) is None

    async def test_what_the_change_raises_leaves_the_lead(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account))

        def refuse(current: Lead) -> Lead:
            raise TooManyTags()

        with pytest.raises(TooManyTags):
            await storage.leads.update(account, lead.lead_id, refuse)
        assert await storage.leads.get(account, lead.lead_id) == lead


class TestChangeTags:
    async def test_adds_and_removes_in_one_step_sorted_and_unique(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, tags=("b", "old")))
        later = T0 + timedelta(minutes=1)

        changed = await storage.leads.change_tags(
            account, lead.lead_id, TagChange(add=("a", "b", "c"), remove=("old", "never")), later
        )

        assert changed is not None
        assert changed.tags == ("a", "b", "c")
        assert changed.updated_at == later
        assert changed.created_at == lead.created_at
        assert await storage.leads.get(account, lead.lead_id) == changed

    async def test_a_tag_in_both_lists_ends_up_removed(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, tags=("x",)))

        changed = await storage.leads.change_tags(
            account, lead.lead_id, TagChange(add=("x", "y"), remove=("x",)), T0
        )

        assert changed is not None
        assert changed.tags == ("y",)

    async def test_past_the_limit_it_raises_and_changes_nothing(self, storage: Storage) -> None:
        account = await storage.new_account()
        full = tuple(f"t{n:02d}" for n in range(MAX_TAGS))
        lead = await storage.leads.add(a_lead(account, tags=full))

        with pytest.raises(TooManyTags):
            await storage.leads.change_tags(account, lead.lead_id, TagChange(add=("zz",)), T0)

        assert await storage.leads.get(account, lead.lead_id) == lead
        swapped = await storage.leads.change_tags(
            account, lead.lead_id, TagChange(add=("zz",), remove=("t00",)), T0
        )
        assert swapped is not None
        assert len(swapped.tags) == MAX_TAGS

    async def test_a_missing_or_foreign_lead_is_none(self, storage: Storage) -> None:
        owner, other = await storage.new_account(), await storage.new_account()
        lead = await storage.leads.add(a_lead(owner, tags=("a",)))

        assert await storage.leads.change_tags(other, lead.lead_id, TagChange(("b",)), T0) is None
        assert await storage.leads.change_tags(owner, "ld_none", TagChange(("b",)), T0) is None
        assert await storage.leads.get(owner, lead.lead_id) == lead

    async def test_concurrent_changes_all_land(self, storage: Storage) -> None:
        account = await storage.new_account()
        lead = await storage.leads.add(a_lead(account, tags=tuple(f"r{n}" for n in range(20))))
        changes = [TagChange(add=(f"a{n}",)) for n in range(20)]
        changes += [TagChange(remove=(f"r{n}",)) for n in range(20)]

        await asyncio.gather(
            *(storage.leads.change_tags(account, lead.lead_id, c, T0) for c in changes)
        )

        stored = await storage.leads.get(account, lead.lead_id)
        assert stored is not None
        assert stored.tags == tuple(sorted(f"a{n}" for n in range(20)))


class TestSegments:
    async def test_tags_all_any_and_none(self, storage: Storage, school: Any) -> None:
        account, leads = school
        ada, bob, cy, dee, eve = (leads[k].lead_id for k in ("ada", "bob", "cy", "dee", "eve"))

        assert await segment(storage, account) == [ada, bob, cy, dee, eve]
        assert await segment(storage, account, all_tags=("vip",)) == [ada, cy]
        assert await segment(storage, account, all_tags=("vip", "evening")) == [ada]
        assert await segment(storage, account, all_tags=("vip", "nope")) == []
        assert await segment(storage, account, any_tags=("weekend", "evening")) == [ada, bob, cy]
        assert await segment(storage, account, no_tags=("vip",)) == [bob, dee, eve]
        assert await segment(storage, account, all_tags=("city: leeds",)) == [eve]
        assert await segment(
            storage, account, any_tags=("evening", "weekend"), no_tags=("vip",)
        ) == [bob]

    async def test_fields_compare_by_json_type(self, storage: Storage, school: Any) -> None:
        account, leads = school
        ada, bob, cy, dee = (leads[k].lead_id for k in ("ada", "bob", "cy", "dee"))

        # Text in any case (issue 27), as tags compare.
        assert await segment(storage, account, fields=(("city", "Leeds"),)) == [ada, cy]
        assert await segment(storage, account, fields=(("city", "LEEDS"),)) == [ada, cy]
        assert await segment(storage, account, fields=(("city", "leeds "),)) == []  # not trimmed
        assert await segment(storage, account, fields=(("age", 34),)) == [ada, bob]  # 34.0
        assert await segment(storage, account, fields=(("age", "34"),)) == [cy]
        assert await segment(storage, account, fields=(("newsletter", True),)) == [ada]
        assert await segment(storage, account, fields=(("newsletter", False),)) == [bob]
        assert await segment(storage, account, fields=(("newsletter", "true"),)) == [dee]
        assert await segment(storage, account, fields=(("score", 1),)) == [cy]  # not true
        assert await segment(storage, account, fields=(("score", True),)) == [dee]
        assert await segment(storage, account, fields=(("missing", "x"),)) == []
        both = (("age", 34), ("city", "York"))
        assert await segment(storage, account, fields=both) == [bob]
        both = (("age", 34), ("city", "leeds"))  # a number and a text at once
        assert await segment(storage, account, fields=both) == [ada]

    async def test_time_range_is_strict(self, storage: Storage, school: Any) -> None:
        account, leads = school
        bob, cy, dee = (leads[k].lead_id for k in ("bob", "cy", "dee"))

        between = {"created_after": moment(1), "created_before": moment(5)}
        assert await segment(storage, account, **between) == [bob, cy, dee]
        assert await segment(storage, account, created_after=moment(4)) == [leads["ada"].lead_id]
        assert await segment(storage, account, created_before=moment(2)) == [leads["eve"].lead_id]

    async def test_filters_combine_with_exact_values_cursor_and_limit(
        self, storage: Storage, school: Any
    ) -> None:
        account, leads = school
        ada, cy = leads["ada"], leads["cy"]
        vip = LeadFilter(all_tags=("vip",))

        after_ada = PageCursor(ada.created_at, ada.lead_id)
        rows = await storage.leads.list(account, LeadQuery(after=after_ada, filter=vip))
        assert ids(rows) == [cy.lead_id]
        first = await storage.leads.list(account, LeadQuery(limit=1, filter=vip))
        assert ids(first) == [ada.lead_id, cy.lead_id]  # limit + 1
        web = LeadFilter(all_tags=("vip",), equals=(("source", "web"),))
        assert ids(await storage.leads.list(account, LeadQuery(filter=web))) == [ada.lead_id]
        assert await storage.leads.count(account, web) == 1

    async def test_another_account_counts_nothing(self, storage: Storage, school: Any) -> None:
        _, leads = school
        other = await storage.new_account()
        await storage.leads.add(a_lead(other, tags=("vip",)))

        assert await storage.leads.count(other, LeadFilter(all_tags=("vip",))) == 1
        assert await storage.leads.count(other, LeadFilter()) == 1
        rows = await storage.leads.list(other, LeadQuery(filter=LeadFilter(any_tags=("vip",))))
        assert leads["ada"].lead_id not in ids(rows)


class TestThroughTheService:
    async def test_concurrent_updates_and_tag_changes_all_land(self, storage: Storage) -> None:
        service = LeadService(storage.leads, storage.lead_events)
        account = await storage.new_account()
        lead = await service.add(account, LeadFields.parse(name="Ada", email="ada@example.com"))
        updates = [
            service.update(account, lead.lead_id, LeadChanges.parse(fields={f"k{n}": n}))
            for n in range(10)
        ]
        tags = [
            service.change_tags(account, lead.lead_id, TagChange((f"t{n}",))) for n in range(10)
        ]

        await asyncio.gather(*updates, *tags)

        stored = await service.get(account, lead.lead_id)
        assert dict(stored.fields) == {f"k{n}": n for n in range(10)}
        assert stored.tags == tuple(sorted(f"t{n}" for n in range(10)))


class TestPagesWhereTheMatchesAreOld:
    """A tag held only by old leads, behind many newer leads without it. On Postgres the
    page is first looked for among the newest leads (a window, set small here), then
    among the matches themselves: every page must be the same either way."""

    @staticmethod
    def leads_of(storage: Storage) -> LeadRepository:
        if storage.kind == "postgres":
            assert storage.database is not None
            return PiccoloLeadRepository(storage.database, page_window=3)
        return storage.leads

    async def test_pages_walk_every_match_in_order(self, storage: Storage) -> None:
        account = await storage.new_account()
        old = [a_lead(account, created_at=moment(n), tags=("alumni",)) for n in range(1, 4)]
        new = [a_lead(account, created_at=moment(100 + n)) for n in range(8)]
        for lead in [*old, *new]:
            await storage.leads.add(lead)
        leads = self.leads_of(storage)
        alumni = LeadFilter(all_tags=("alumni",))
        expected = ids(sorted(old, key=lambda lead: lead.created_at, reverse=True))

        first = await leads.list(account, LeadQuery(limit=2, filter=alumni))
        assert ids(first) == expected[:3]  # two and the one that says a page follows
        after = PageCursor(first[1].created_at, first[1].lead_id)
        rest = await leads.list(account, LeadQuery(limit=2, after=after, filter=alumni))
        assert ids(rest) == expected[2:]
        any_of = LeadFilter(any_tags=("alumni", "nobody"))
        assert ids(await leads.list(account, LeadQuery(filter=any_of))) == expected
        absent = LeadFilter(all_tags=("nobody",))
        assert await leads.list(account, LeadQuery(filter=absent)) == []

    async def test_a_page_found_among_the_newest_is_the_same(self, storage: Storage) -> None:
        account = await storage.new_account()
        tagged = [a_lead(account, created_at=moment(n), tags=("evening",)) for n in range(6)]
        for lead in tagged:
            await storage.leads.add(lead)
        leads = self.leads_of(storage)
        evening = LeadFilter(all_tags=("evening",), no_tags=("vip",))
        page = await leads.list(account, LeadQuery(limit=2, filter=evening))
        newest = sorted(tagged, key=lambda lead: lead.created_at, reverse=True)
        assert ids(page) == ids(newest[:3])
