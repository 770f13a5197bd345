"""Listing rules: LeadQuery, PageCursor, page_of, and lead ids."""

from __future__ import annotations

import base64
import re
import string
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import (
    CURSOR,
    DEFAULT_PAGE_SIZE,
    EPOCH,
    MAX_CURSOR_LENGTH,
    MAX_PAGE_SIZE,
    LeadQuery,
    PageCursor,
    page_of,
)
from leadmail.domain.leads import LEAD_ID_PREFIX, Lead, new_lead_id
from leadmail.domain.segments import LeadFilter

T0 = datetime(2026, 2, 1, tzinfo=UTC)

# Fixed offsets only: a cursor carries an instant, written in UTC. Whole minutes and odd
# seconds alike must survive the trip.
offsets = st.timedeltas(
    min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
).map(timezone)
# When leads are created: from 1970 (a cursor counts microseconds since then) on.
created_ats = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2999, 12, 31),
    timezones=st.one_of(st.just(UTC), offsets),
)


def decode_or_refuse(token: str) -> PageCursor | None:
    """Decode, or return None when refused the documented way. Anything else propagates."""
    try:
        return PageCursor.decode(token)
    except ValidationFailed as e:
        fields = [f.field for f in e.errors]
    assert fields == ["cursor"]
    return None


def lead_at(n: int, moment: datetime) -> Lead:
    return Lead(
        lead_id=f"ld_{n:04d}",
        account_id="acc_1",
        name=f"Lead {n}",
        email=f"lead{n}@example.com",
        source="",
        note="",
        phone="",
        created_at=moment,
        updated_at=moment,
    )


# --- LeadQuery ----------------------------------------------------------------------


def test_query_defaults() -> None:
    assert LeadQuery.parse() == LeadQuery(limit=DEFAULT_PAGE_SIZE, after=None, filter=LeadFilter())


@pytest.mark.parametrize("limit", [1, 2, 50, MAX_PAGE_SIZE])
def test_limit_within_bounds_is_kept(limit: int) -> None:
    assert LeadQuery.parse(limit=limit).limit == limit


@pytest.mark.parametrize("limit", [0, -1, MAX_PAGE_SIZE + 1, 10_000])
def test_limit_out_of_bounds_is_refused(limit: int) -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadQuery.parse(limit=limit)

    assert [e.field for e in caught.value.errors] == ["limit"]


@pytest.mark.parametrize(
    "email", ["ada@example.com", "ADA@EXAMPLE.COM", "  Ada@Example.com ", "ada@Example.COM"]
)
def test_email_filter_becomes_the_email_key(email: str) -> None:
    assert LeadQuery.parse(email=email).filter.equals == (("email_key", "ada@example.com"),)


def test_invalid_email_filter_is_not_an_error() -> None:
    # It matches nothing stored, which is the honest answer to "leads with this email".
    assert LeadQuery.parse(email="  Not An Email ").filter.equals == (
        ("email_key", "not an email"),
    )


def test_source_filter_is_kept() -> None:
    assert LeadQuery.parse(source="webinar").filter.equals == (("source", "webinar"),)


def test_phone_filter_is_kept_as_typed_but_trimmed() -> None:
    assert LeadQuery.parse(phone=" +44 20 7946 0958 ").filter.equals == (
        ("phone", "+44 20 7946 0958"),
    )


def test_no_filter_given_is_no_filter() -> None:
    assert LeadQuery.parse(email=None, source=None, phone=None).filter.equals == ()


def test_cursor_is_decoded() -> None:
    cursor = PageCursor(T0, "ld_abc")

    assert LeadQuery.parse(cursor=cursor.encode()).after == cursor


def test_bad_cursor_in_query_is_a_cursor_error() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadQuery.parse(cursor="garbage")

    assert [e.field for e in caught.value.errors] == ["cursor"]


# --- PageCursor ---------------------------------------------------------------------

# What a lead id is made of (leads.new_lead_id), up to the column's 40 characters.
lead_ids = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "_-"), min_size=1, max_size=40
)


@given(created_at=created_ats, lead_id=lead_ids)
@example(created_at=EPOCH, lead_id="ld_x")
@example(created_at=datetime(2999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), lead_id="-")
def test_cursor_round_trips(created_at: datetime, lead_id: str) -> None:
    token = PageCursor(created_at, lead_id).encode()
    decoded = PageCursor.decode(token)

    assert decoded == PageCursor(created_at, lead_id)  # the same instant and id
    assert decoded.created_at.utcoffset() == timedelta(0)


@given(created_at=created_ats, lead_id=lead_ids)
def test_cursor_is_the_documented_shape_and_needs_no_url_escaping(
    created_at: datetime, lead_id: str
) -> None:
    token = PageCursor(created_at, lead_id).encode()

    assert re.fullmatch(CURSOR.pattern, token)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", token)
    assert len(token) <= MAX_CURSOR_LENGTH


def test_a_cursor_is_microseconds_since_1970_and_the_id() -> None:
    assert PageCursor(T0, "ld_abc").encode() == "1769904000000000.ld_abc"
    assert PageCursor.decode("1.ld_abc") == PageCursor(EPOCH + timedelta(microseconds=1), "ld_abc")


@given(token=st.text())
@example("")
@example(".")
@example("1.")
@example(".ld_x")
@example("1.ld_x\n")
@example("\ud800")
@example("123456789012345678.ld_x")  # 18 digits
@example("-1.ld_x")
@example("1." + "x" * 41)
@example("1.ld x")
@example("1e5.ld_x")
@example("+1.ld_x")
@example("\uff11.ld_x")  # FULLWIDTH DIGIT ONE: a digit, but not ASCII
def test_text_is_a_cursor_exactly_when_it_has_the_documented_shape(token: str) -> None:
    decoded = decode_or_refuse(token)

    assert (decoded is not None) == bool(re.fullmatch(CURSOR.pattern, token, flags=re.ASCII))
    if decoded is not None:
        assert decoded.created_at.tzinfo is not None
        assert decoded.encode().split(".", 1)[1] == token.split(".", 1)[1]


@pytest.mark.parametrize(
    "token",
    [
        "not-a-cursor",
        "!!!",
        "W10",
        "eyJhIjoxfQ",  # base64 JSON, as cursors once were
        "2026-01-01T00:00:00.ld_x",
        "1.ld_x.2",
    ],
)
def test_garbage_cursor_is_refused(token: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        PageCursor.decode(token)

    assert [e.field for e in caught.value.errors] == ["cursor"]
    assert caught.value.errors[0].message == "is not a cursor this service issued"


# --- page_of ------------------------------------------------------------------------


def leads_newest_first(count: int) -> list[Lead]:
    return [lead_at(n, T0 - timedelta(minutes=n)) for n in range(count)]


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_page_of_keeps_up_to_limit_rows_and_has_no_cursor(count: int) -> None:
    rows = leads_newest_first(count)

    page = page_of(rows, limit=3)

    assert page.leads == rows
    assert page.next_cursor is None


def test_page_of_cuts_the_extra_row_and_points_after_the_last_kept_one() -> None:
    rows = leads_newest_first(4)

    page = page_of(rows, limit=3)

    assert page.leads == rows[:3]
    assert page.next_cursor is not None
    assert PageCursor.decode(page.next_cursor) == PageCursor(rows[2].created_at, rows[2].lead_id)


def test_page_of_limit_one() -> None:
    rows = leads_newest_first(2)

    page = page_of(rows, limit=1)

    assert page.leads == rows[:1]
    assert page.next_cursor == PageCursor(rows[0].created_at, rows[0].lead_id).encode()


# --- lead ids -----------------------------------------------------------------------


def test_lead_id_has_prefix_and_128_random_bits() -> None:
    lead_id = new_lead_id()

    assert lead_id.startswith(LEAD_ID_PREFIX)
    body = lead_id.removeprefix(LEAD_ID_PREFIX)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", body)
    assert len(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) >= 16


def test_lead_ids_are_unique_and_not_a_counter() -> None:
    ids = [new_lead_id() for _ in range(2000)]
    bodies = [i.removeprefix(LEAD_ID_PREFIX) for i in ids]

    assert len(set(ids)) == len(ids)
    # A counter (or a timestamp) keeps its leading characters and comes out sorted.
    assert ids != sorted(ids)
    assert len({b[0] for b in bodies}) > 32
    assert len({b[:4] for b in bodies}) > 1900
