"""Segments: LeadFilter from query parameters and from JSON, and what it matches."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter, moment

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def named(pairs: list[tuple[str, str]]) -> list[str]:
    with pytest.raises(ValidationFailed) as caught:
        LeadFilter.parse(pairs)
    return [e.field for e in caught.value.errors]


def json_named(mapping: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationFailed) as caught:
        LeadFilter.from_json(mapping)
    return [e.field for e in caught.value.errors]


def a_lead(**changes: Any) -> Lead:
    values: dict[str, Any] = {
        "lead_id": "ld_1",
        "account_id": "acc_1",
        "name": "Ada",
        "email": "ada@example.com",
        "source": "web",
        "note": "",
        "phone": "",
        "created_at": T0,
        "updated_at": T0,
        **changes,
    }
    return Lead(**values)


def test_no_parameter_is_every_lead() -> None:
    assert LeadFilter.parse([]) == LeadFilter()
    assert LeadFilter().matches(a_lead(tags=("x",), fields={"a": 1}))


def test_repeatable_tag_parameters_are_normalised() -> None:
    parsed = LeadFilter.parse(
        [("tag", " VIP"), ("tag", "evening"), ("any_tag", "a"), ("any_tag", "B"), ("not_tag", "x")]
    )

    assert parsed.all_tags == ("evening", "vip")
    assert parsed.any_tags == ("a", "b")
    assert parsed.no_tags == ("x",)


def test_exact_filters_as_the_listing_always_took_them() -> None:
    parsed = LeadFilter.parse(
        [("email", " ADA@Example.com "), ("source", "Web "), ("phone", " +44 1 ")]
    )

    assert parsed.equals == (
        ("email_key", "ada@example.com"),
        ("source", "Web "),
        ("phone", "+44 1"),
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("false", False),
        ("42", 42),
        ("-7", -7),
        ("4.5", 4.5),
        ("1e3", 1000.0),
        ("Leeds", "Leeds"),
        ("True", "True"),
        ("01234", "01234"),
        ("42 ", "42 "),
        ("", ""),
    ],
)
def test_a_field_value_compares_as_the_type_it_spells(text: str, value: object) -> None:
    [(key, parsed)] = LeadFilter.parse([("field.city", text)]).fields

    assert key == "city"
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("pairs", "field"),
    [
        ([("colour", "red")], "colour"),
        ([("Tag", "x")], "Tag"),
        ([("limit", "5")], "limit"),  # the listing takes it out first; the count does not
        ([("tag", "")], "tag"),
        ([("tag", "no/slash")], "tag"),
        ([("any_tag", "x" * 65)], "any_tag"),
        ([("source", "a"), ("source", "b")], "source"),
        ([("email", "a\x00")], "email"),
        ([("created_after", "yesterday")], "created_after"),
        ([("created_after", "2026-03-02")], "created_after"),
        ([("created_before", "2026-03-02T09:30:00")], "created_before"),  # no offset
        ([("created_before", "2026-02-30T09:30:00Z")], "created_before"),
        ([("field.City", "x")], "field.City"),
        ([("field.", "x")], "field."),
        ([("field.city", "x" * 1001)], "field.city"),
        ([("field.city", "a"), ("field.city", "b")], "field.city"),
        ([("field.n", "1e999")], "field.n"),
    ],
)
def test_unknown_repeated_and_malformed_parameters_are_named(
    pairs: list[tuple[str, str]], field: str
) -> None:
    assert named(pairs) == [field]


def test_every_broken_parameter_is_named_at_once() -> None:
    assert named([("tag", ""), ("nope", "1"), ("created_after", "x")]) == [
        "tag",
        "nope",
        "created_after",
    ]


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-03-02T09:30:00Z", T0),
        ("2026-03-02t09:30:00z", T0),
        ("2026-03-02 09:30:00Z", T0),
        ("2026-03-02T10:30:00+01:00", T0),
        ("2026-03-02T10:30:00 01:00", T0),  # a "+" a query string turned into a space
        ("2026-03-02T08:30:00-01:00", T0),
        ("2026-03-02T09:30:00.250Z", T0 + timedelta(milliseconds=250)),
        ("0001-01-01T00:00:00+05:00", datetime.min.replace(tzinfo=UTC)),
        ("9999-12-31T23:59:59-05:00", datetime.max.replace(tzinfo=UTC)),
    ],
)
def test_moments_are_rfc_3339_in_utc(text: str, instant: datetime) -> None:
    assert moment(text) == instant
    assert moment(text).utcoffset() == timedelta(0)


# Offsets of whole minutes, as RFC 3339 writes them.
offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)), offsets)
def test_any_isoformat_with_an_offset_is_that_moment(when: datetime, offset: timezone) -> None:
    aware = when.replace(tzinfo=offset)

    parsed = moment(aware.isoformat())

    assert parsed == aware
    assert parsed.utcoffset() == timedelta(0)


def test_from_json_takes_the_same_names_and_json_types() -> None:
    parsed = LeadFilter.from_json(
        {
            "tag": ["VIP", "evening"],
            "any_tag": "x",
            "source": "web",
            "created_after": "2026-03-02T09:30:00Z",
            "field.age": 42,
            "field.vip": True,
            "field.zip": "01234",
            "field.count": "42",
        }
    )

    assert parsed.all_tags == ("evening", "vip")
    assert parsed.any_tags == ("x",)
    assert parsed.created_after == T0
    assert dict(parsed.fields) == {"age": 42, "vip": True, "zip": "01234", "count": "42"}
    assert type(dict(parsed.fields)["count"]) is str  # JSON has types: "42" is text


@pytest.mark.parametrize(
    ("mapping", "field"),
    [
        ({"nope": 1}, "nope"),
        ({"tag": 5}, "tag"),
        ({"tag": ["ok", 5]}, "tag"),
        ({"source": ["a"]}, "source"),
        ({"field.x": None}, "field.x"),
        ({"field.x": [1]}, "field.x"),
        ({"created_before": 1700000000}, "created_before"),
    ],
)
def test_from_json_refuses_what_the_query_would_and_wrong_types(
    mapping: dict[str, Any], field: str
) -> None:
    assert json_named(mapping) == [field]


def test_matching_follows_every_filter() -> None:
    lead = a_lead(tags=("evening", "vip"), fields={"age": 34, "vip": True, "zip": "01234"})

    def matches(**filters: Any) -> bool:
        return LeadFilter(**filters).matches(lead)

    assert matches(all_tags=("vip", "evening"))
    assert not matches(all_tags=("vip", "weekend"))
    assert matches(any_tags=("weekend", "vip"))
    assert not matches(any_tags=("weekend",))
    assert not matches(no_tags=("vip",))
    assert matches(fields=(("age", 34.0),))
    assert not matches(fields=(("age", "34"),))
    assert not matches(fields=(("vip", 1),))
    assert matches(fields=(("vip", True), ("zip", "01234")))
    assert not matches(fields=(("zip", 1234),))
    assert matches(created_after=T0 - timedelta(microseconds=1), created_before=T0 + timedelta(1))
    assert not matches(created_after=T0)
    assert not matches(created_before=T0)
    assert matches(equals=(("source", "web"),))


def test_offsets_are_compared_as_instants() -> None:
    east = datetime(2026, 3, 2, 10, 30, tzinfo=timezone(timedelta(hours=1)))

    assert LeadFilter.parse([("created_after", east.isoformat())]).created_after == T0


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"tag": ["Interested:Python", "evening"], "any_tag": "a", "not_tag": ["enrolled"]},
        {"email": "Ada@Example.COM", "source": "open-day", "phone": " +44 20 7946 0958 "},
        {"email": "not an address"},  # matches nothing, and still nothing once read back
        {"created_after": "2026-03-02T09:30:00.5+01:00", "created_before": "9999-12-31T23:59:59Z"},
        {"created_after": "0001-01-01T00:00:00+01:00"},  # out of range in UTC: the first moment
        {"field.age": 42, "field.score": 4.5, "field.city": "Leeds", "field.vip": False},
        {"field.zip": "01234", "field.n": "42"},  # text that spells a number stays text
    ],
)
def test_to_json_is_read_back_by_from_json_as_the_same_filter(given: dict[str, Any]) -> None:
    segment = LeadFilter.from_json(given)

    written = segment.to_json()

    assert LeadFilter.from_json(written) == segment
    assert LeadFilter.from_json(json.loads(json.dumps(written))) == segment  # as stored


def test_q_is_folded_and_trimmed_blank_is_no_search_and_round_trips() -> None:
    searched = LeadFilter.parse([("q", "  Ada LOV ")])

    assert searched.search == "ada lov"
    assert LeadFilter.from_json(searched.to_json()) == searched
    assert LeadFilter.parse([("q", "   ")]) == LeadFilter()
    assert LeadFilter.from_json({"q": "Zoë", "tag": "vip"}).search == "zoë"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([("q", "a" * 255)], "must be at most 254 characters"),
        ([("q", "ada\x00")], "must not contain NUL characters"),
        ([("q", "ada"), ("q", "bob")], "may be given only once"),
    ],
)
def test_a_bad_q_is_refused_naming_it(given: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        LeadFilter.parse(given)

    assert [(e.field, e.message) for e in refused.value.errors] == [("q", message)]


def test_q_in_json_must_be_text() -> None:
    with pytest.raises(ValidationFailed, match="q"):
        LeadFilter.from_json({"q": 5})
