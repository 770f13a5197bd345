"""The suppression list use case (services/suppressions.py) on the memory adapter: a
client's entries (manual only, normalised, one per address), the service's own (any
reason, a binding one replacing one that is not), pages and their cursors, removal."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.suppressions import (
    SuppressionNotFound,
    SuppressionReason,
    address_digest,
)
from leadmail.services.suppressions import SuppressionList

R = SuppressionReason
ACCOUNT, OTHER = "acc_school", "acc_other"
T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def ticking() -> Iterator[datetime]:
    moment = T0
    while True:
        yield moment
        moment += timedelta(seconds=1)


def make_list() -> tuple[SuppressionList, MemorySuppressionRepository]:
    repository = MemorySuppressionRepository()
    clock = ticking()
    return SuppressionList(repository, clock=lambda: next(clock)), repository


def field_of(caught: pytest.ExceptionInfo[ValidationFailed]) -> str:
    [error] = caught.value.errors
    return error.field


async def test_a_client_adds_an_address_once_normalised() -> None:
    suppressions, _ = make_list()

    first = await suppressions.add(ACCOUNT, "Ada Lovelace <Ada@Example.COM>")
    again = await suppressions.add(ACCOUNT, "ada@example.com")

    assert first.written
    assert not again.written
    assert first.entry.email == "ada@example.com"
    assert first.entry.reason is R.MANUAL
    assert first.entry.digest == address_digest("ada@example.com")
    assert again.entry == first.entry  # the entry as it stands, its time unchanged
    assert (first.entry.message_id, first.entry.campaign_id) == (None, None)


async def test_an_address_added_twice_in_one_millisecond_is_added_once() -> None:
    suppressions = SuppressionList(MemorySuppressionRepository(), clock=lambda: T0)

    first = await suppressions.add(ACCOUNT, "ada@example.com")
    again = await suppressions.add(ACCOUNT, "ada@example.com")

    assert first.written
    assert not again.written
    assert again.entry == first.entry


@pytest.mark.parametrize("reason", [R.UNSUBSCRIBED, R.BOUNCED, R.COMPLAINED])
async def test_a_client_may_add_only_manual_entries(reason: R) -> None:
    suppressions, repository = make_list()

    with pytest.raises(ValidationFailed) as caught:
        await suppressions.add(ACCOUNT, "ada@example.com", reason)

    assert field_of(caught) == "reason"
    assert "added by the service itself" in str(caught.value)
    assert await repository.list(ACCOUNT, 10) == []


@pytest.mark.parametrize("email", ["", "not an address", "Ada <>", "a@b@c.io"])
async def test_a_bad_address_is_named(email: str) -> None:
    suppressions, repository = make_list()

    with pytest.raises(ValidationFailed) as caught:
        await suppressions.add(ACCOUNT, email)

    assert field_of(caught) == "email"
    assert await repository.list(ACCOUNT, 10) == []


async def test_the_service_records_any_reason_and_a_binding_one_replaces_one_that_is_not() -> None:
    suppressions, _ = make_list()
    at = T0 + timedelta(days=1)

    manual = await suppressions.add(ACCOUNT, "ada@example.com")
    bounced = await suppressions.record(
        ACCOUNT, "Ada <ADA@example.com>", R.BOUNCED, now=at, message_id="msg_1"
    )
    kept = await suppressions.record(ACCOUNT, "ada@example.com", R.UNSUBSCRIBED, campaign_id="c")
    readded = await suppressions.add(ACCOUNT, "ada@example.com")

    assert manual.entry.reason is R.MANUAL
    assert (bounced.reason, bounced.created_at, bounced.message_id) == (R.BOUNCED, at, "msg_1")
    assert kept == bounced
    assert not readded.written
    assert readded.entry == bounced
    page = await suppressions.list(ACCOUNT, 10)
    assert page.items == [bounced]


async def test_the_list_is_newest_first_a_page_at_a_time() -> None:
    suppressions, _ = make_list()
    for n in range(5):
        await suppressions.add(ACCOUNT, f"l{n}@example.com")
    await suppressions.add(OTHER, "theirs@example.com")

    seen, cursor, pages = [], None, 0
    while True:
        page = await suppressions.list(ACCOUNT, 2, cursor)
        pages += 1
        seen += [e.email for e in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor

    assert seen == [f"l{n}@example.com" for n in reversed(range(5))]
    assert pages == 3
    whole = await suppressions.list(ACCOUNT, 5)
    assert whole.next_cursor is None
    assert len(whole.items) == 5


async def test_the_list_keeps_one_reason_when_asked() -> None:
    suppressions, _ = make_list()
    await suppressions.add(ACCOUNT, "manual@example.com")
    await suppressions.record(ACCOUNT, "bounced@example.com", R.BOUNCED)
    await suppressions.record(ACCOUNT, "left@example.com", R.UNSUBSCRIBED)

    page = await suppressions.list(ACCOUNT, 10, reason=R.BOUNCED)

    assert [e.email for e in page.items] == ["bounced@example.com"]


@pytest.mark.parametrize("limit", [0, -1, 101])
async def test_a_limit_outside_1_to_100_is_named(limit: int) -> None:
    suppressions, _ = make_list()

    with pytest.raises(ValidationFailed) as caught:
        await suppressions.list(ACCOUNT, limit)

    assert field_of(caught) == "limit"


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor",
        "1.zz",
        "1." + "A" * 40,  # upper case: never issued
        "1." + "a" * 39,
        PageCursor(T0, "ld_0123456789abcdef").encode(),  # a lead listing's
    ],
)
async def test_a_cursor_this_list_did_not_issue_is_named(cursor: str) -> None:
    suppressions, _ = make_list()

    with pytest.raises(ValidationFailed) as caught:
        await suppressions.list(ACCOUNT, 10, cursor)

    assert field_of(caught) == "cursor"


async def test_an_address_is_removed_once_in_any_of_its_forms() -> None:
    suppressions, repository = make_list()
    await suppressions.add(ACCOUNT, "ada@example.com")
    await suppressions.add(OTHER, "ada@example.com")

    await suppressions.remove(ACCOUNT, "Ada <ADA@example.com>")

    with pytest.raises(SuppressionNotFound):
        await suppressions.remove(ACCOUNT, "ada@example.com")
    assert await repository.list(ACCOUNT, 10) == []
    assert len(await repository.list(OTHER, 10)) == 1  # another account's stays


@pytest.mark.parametrize("email", ["nobody@example.com", "not an address", ""])
async def test_removing_what_is_not_on_the_list_is_not_found(email: str) -> None:
    suppressions, _ = make_list()
    await suppressions.add(OTHER, "nobody@example.com")

    with pytest.raises(SuppressionNotFound) as caught:
        await suppressions.remove(ACCOUNT, email)

    assert caught.value.code == "SUPPRESSION_NOT_FOUND"


async def test_an_erased_entry_is_listed_by_its_digest_and_removed_by_its_address() -> None:
    suppressions, repository = make_list()
    entry = await suppressions.record(ACCOUNT, "ada@example.com", R.UNSUBSCRIBED)
    await repository.erase(ACCOUNT, entry.digest)

    [listed] = (await suppressions.list(ACCOUNT, 10)).items
    await suppressions.remove(ACCOUNT, "ADA@example.com")

    assert listed.email == entry.digest != "ada@example.com"
    assert await repository.list(ACCOUNT, 10) == []
