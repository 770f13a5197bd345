"""A lead search (``LeadFilter.search``, the API's ``q``) on memory, SQLite and Postgres: the
beginning of any word of the name, or of the address, in any case; combined with every
other filter; in pages and counts alike; literal where SQL has wildcards; one account's."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.domain.lead_listing import LeadQuery, PageCursor
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from tests.contract.support import Storage, a_lead, moment

PEOPLE = {
    # key: (name, email, tags)
    "ada": ("Ada Lovelace", "ada.lovelace@example.com", ("vip",)),
    "mary": ("Mary-Jane O'Brien", "mj@example.org", ()),
    "zoe": ("ZOË Ådahl", "zoe@example.com", ("vip",)),
    "tom": ("Tom Adams", "t.adams@school.example", ()),
    "pct": ("Percy 100%_sure", "percy@example.com", ()),
    "nobody": ("Grace Hopper", "grace@navy.example", ()),
    "kim": ("Kim Lee Park", "kim-lee.park@example.com", ()),
}


@pytest.fixture
async def people(storage: Storage) -> tuple[str, dict[str, Lead]]:
    account = await storage.new_account()
    leads: dict[str, Lead] = {}
    for i, (key, (name, email, tags)) in enumerate(PEOPLE.items()):
        leads[key] = await storage.leads.add(
            a_lead(account, name=name, email=email, tags=tags, created_at=moment(i))
        )
    return account, leads


async def found(storage: Storage, account: str, search: str, **filters: Any) -> set[str]:
    """Who the search finds (a page of all, newest first), checked against its count."""
    wanted = LeadFilter(search=search, **filters)
    rows = await storage.leads.list(account, LeadQuery(limit=100, filter=wanted))
    assert await storage.leads.count(account, wanted) == len(rows)
    assert [r.created_at for r in rows] == sorted((r.created_at for r in rows), reverse=True)
    names = {lead.name: key for key, (lead_name, _, _) in PEOPLE.items() for lead in rows
             if lead.name == lead_name}  # fmt: skip
    return set(names.values())


@pytest.mark.parametrize(
    ("search", "who"),
    [
        ("ada", {"ada", "tom"}),  # Ada's first name; Tom's second word, "adams"
        ("lov", {"ada"}),  # a later word of the name
        ("ada.l", {"ada"}),  # the address's beginning
        ("love", {"ada"}),
        ("ovelace", set()),  # inside a word: not a beginning
        ("jane", {"mary"}),  # after a hyphen
        ("mary-j", {"mary"}),  # a hyphen of the search: a hyphenated word, joined
        ("maryj", {"mary"}),  # a hyphenated word is found joined too
        ("mary-jane o'b", {"mary"}),
        ("mary j", {"mary"}),  # a hyphen of the name is a space to a search
        ("kim lee", {"kim"}),  # words of the name
        ("kim-l", {"kim"}),  # the address, as written with its hyphen
        ("kimlee.p", {"kim"}),  # the address joined
        ("lee-p", set()),  # the name has no hyphen, the address no such beginning
        ("-", set()),  # hyphens alone: as they are, no hyphen begins a word
        ("o'b", {"mary"}),
        ("mj@example.org", {"mary"}),  # the whole address
        ("example", set()),  # the address's domain alone is not its beginning
        ("zoë", {"zoe"}),  # Unicode, lower-cased
        ("ådahl", {"zoe"}),
        ("t.ad", {"tom"}),
        ("100%", {"pct"}),  # % and _ are literal, not wildcards
        ("100%_s", {"pct"}),
        ("1_0", set()),
        ("%", set()),
        ("_", set()),
        ("ada lov", {"ada"}),  # words in order, from a word's beginning
        ("lovelace ada", set()),
    ],
)
async def test_a_search_finds_the_beginning_of_a_word_or_the_address(
    storage: Storage, people: Any, search: str, who: set[str]
) -> None:
    account, _ = people

    assert await found(storage, account, search) == who


async def test_a_search_combines_with_other_filters_and_stays_in_its_account(
    storage: Storage, people: Any
) -> None:
    account, _ = people
    other = await storage.new_account()
    await storage.leads.add(a_lead(other, name="Ada Other", email="ada@other.example"))

    assert await found(storage, account, "ada", all_tags=("vip",)) == {"ada"}
    assert await found(storage, account, "ada", no_tags=("vip",)) == {"tom"}
    assert await found(storage, account, "z", all_tags=("vip",)) == {"zoe"}
    other_rows = await storage.leads.list(other, LeadQuery(filter=LeadFilter(search="ada")))
    assert [lead.name for lead in other_rows] == ["Ada Other"]


async def test_a_search_pages_by_its_cursor_through_both_tries(storage: Storage) -> None:
    """Many matches older than many others: on Postgres the page within the newest leads
    is not full, and the matches themselves are asked (a window of 3 here)."""
    account = await storage.new_account()
    old = [
        await storage.leads.add(
            a_lead(account, name=f"Ada {i}", email=f"a{i}@example.com", created_at=moment(i))
        )
        for i in range(5)
    ]
    for i in range(6):
        await storage.leads.add(
            a_lead(account, name=f"Bob {i}", email=f"b{i}@example.com", created_at=moment(10 + i))
        )
    leads = storage.leads
    if isinstance(leads, PiccoloLeadRepository):
        leads = PiccoloLeadRepository(leads._db, page_window=3)

    wanted = LeadFilter(search="ada")
    first = await leads.list(account, LeadQuery(limit=2, filter=wanted))
    assert [lead.lead_id for lead in first] == [old[4].lead_id, old[3].lead_id, old[2].lead_id]
    after = PageCursor(first[1].created_at, first[1].lead_id)
    rest = await leads.list(account, LeadQuery(limit=10, after=after, filter=wanted))
    assert [lead.lead_id for lead in rest] == [old[2].lead_id, old[1].lead_id, old[0].lead_id]


@pytest.mark.parametrize("spread", [1, 4], ids=["dense", "sparse"])
async def test_a_sparse_search_pages_alike_through_the_wider_window(
    storage: Storage, spread: int
) -> None:
    """On Postgres with a window of 3: the first finds one match, the wider window (11
    leads) the page when matches are one in two, and the matches themselves when they are
    one in five. Every store gives the same pages."""
    account = await storage.new_account()
    adas = []
    for i in range(30):
        match = i % (spread + 1) == 0
        lead = a_lead(
            account,
            name="Ada Match" if match else "Bob Other",
            email=f"{'a' if match else 'b'}{i}@example.com",
            created_at=moment(100 - i),  # i = 0 the newest
        )
        await storage.leads.add(lead)
        if match:
            adas.append(lead.lead_id)
    leads = storage.leads
    if isinstance(leads, PiccoloLeadRepository):
        leads = PiccoloLeadRepository(leads._db, page_window=3)

    wanted = LeadFilter(search="ada")
    shown: list[str] = []
    after = None
    while True:
        page = await leads.list(account, LeadQuery(limit=2, after=after, filter=wanted))
        shown += [lead.lead_id for lead in page[:2]]
        if len(page) <= 2:
            break
        after = PageCursor(page[1].created_at, page[1].lead_id)

    assert shown == adas
