"""The rules of a lead's tags and custom fields (domain/tags.py, domain/custom_fields.py),
as LeadFields and LeadChanges apply them, and a lead's template variables."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.custom_fields import MAX_FIELDS, MAX_FIELDS_BYTES, encode_fields
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_variables import template_variables
from leadmail.domain.leads import Lead, LeadChanges, LeadFields
from leadmail.domain.tags import MAX_TAG, MAX_TAGS, TAG, TagChange, TooManyTags, tag_list

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
TAG_TEXT = st.text(alphabet=st.sampled_from("abcXYZ019-_.: "), min_size=1, max_size=MAX_TAG).filter(
    lambda t: t.strip()
)


def fields_of_error(error: ValidationFailed) -> list[str]:
    return [e.field for e in error.errors]


def refused(**values: Any) -> list[str]:
    with pytest.raises(ValidationFailed) as caught:
        LeadFields.parse(name="Ada", email="ada@example.com", **values)
    return fields_of_error(caught.value)


def a_lead(**changes: Any) -> Lead:
    values: dict[str, Any] = {
        "lead_id": "ld_1",
        "account_id": "acc_1",
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "source": "web",
        "note": "",
        "phone": "",
        "created_at": T0,
        "updated_at": T0,
        **changes,
    }
    return Lead(**values)


# --- tags -----------------------------------------------------------------------------


def test_tags_are_trimmed_lower_cased_unique_and_sorted() -> None:
    fields = LeadFields.parse(
        name="Ada", email="ada@example.com", tags=[" VIP ", "evening class", "vip", "A:b.c_d-1"]
    )

    assert fields.tags == ("a:b.c_d-1", "evening class", "vip")


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        (["ok", ""], "tags[1]"),
        (["ok", "   "], "tags[1]"),
        (["a" * (MAX_TAG + 1)], "tags[0]"),
        (["ok", "ok", "no/slash"], "tags[2]"),
        (["émigré"], "tags[0]"),
        (["tab\tinside"], "tags[0]"),
    ],
)
def test_a_broken_tag_is_named_by_its_index(tags: list[str], field: str) -> None:
    assert refused(tags=tags) == [field]


def test_more_than_50_tags_as_sent_are_refused_naming_tags() -> None:
    assert refused(tags=[f"t{n}" for n in range(MAX_TAGS + 1)]) == ["tags"]
    assert len(tag_list([f"t{n}" for n in range(MAX_TAGS)], "tags")) == MAX_TAGS


def test_a_tag_of_64_characters_after_trimming_is_accepted() -> None:
    assert tag_list(["  " + "x" * MAX_TAG + "  "], "tags") == ("x" * MAX_TAG,)


@given(st.lists(TAG_TEXT, max_size=MAX_TAGS))
def test_any_valid_tags_come_back_normalised(tags: list[str]) -> None:
    stored = tag_list(tags, "tags")

    assert list(stored) == sorted(set(stored))
    assert {t.strip().lower() for t in tags} == set(stored)
    assert all(TAG.fullmatch(t) and t == t.strip().lower() for t in stored)
    assert tag_list(list(stored), "tags") == stored  # idempotent


def test_tag_change_parses_both_lists_and_names_broken_tags() -> None:
    assert TagChange.parse(["B", "a"], [" C "]) == TagChange(("a", "b"), ("c",))
    with pytest.raises(ValidationFailed) as caught:
        TagChange.parse(["ok", "bad/"], ["", "ok"])
    assert fields_of_error(caught.value) == ["add[1]", "remove[0]"]


def test_tag_change_applies_adds_then_removes_within_the_limit() -> None:
    change = TagChange(add=("b", "x"), remove=("x", "z"))

    assert change.apply_to(("a", "z")) == ("a", "b")
    assert TagChange().empty
    assert not change.empty
    full = tuple(f"t{n:02d}" for n in range(MAX_TAGS))
    with pytest.raises(TooManyTags) as caught:
        TagChange(add=("new",)).apply_to(full)
    assert fields_of_error(caught.value) == ["add"]


# --- custom fields --------------------------------------------------------------------


def test_fields_keep_text_numbers_and_booleans_and_drop_nulls() -> None:
    given_fields = {"city": "Leeds", "age": 34, "ratio": 0.5, "vip": True, "gone": None}

    fields = LeadFields.parse(name="Ada", email="ada@example.com", fields=given_fields)

    assert fields.fields == {"city": "Leeds", "age": 34, "ratio": 0.5, "vip": True}


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"City": "x"}, "fields.City"),
        ({"1st": "x"}, "fields.1st"),
        ({"a-b": "x"}, "fields.a-b"),
        ({"k" * 65: "x"}, "fields." + "k" * 65),
        ({"city": "x" * 1001}, "fields.city"),
        ({"city": ["Leeds"]}, "fields.city"),
        ({"city": {"name": "Leeds"}}, "fields.city"),
        ({"nul": "a\x00b"}, "fields.nul"),
        ({"inf": float("inf")}, "fields.inf"),
    ],
)
def test_a_broken_field_is_named_by_its_key(fields: dict[str, Any], named: str) -> None:
    assert refused(fields=fields) == [named]


def test_more_than_50_fields_or_8_kb_are_refused_naming_fields() -> None:
    assert refused(fields={f"k{n}": n for n in range(MAX_FIELDS + 1)}) == ["fields"]
    big = {f"k{n}": "x" * 1000 for n in range(9)}  # 9 KB of text
    assert len(encode_fields(big).encode()) > MAX_FIELDS_BYTES
    assert refused(fields=big) == ["fields"]
    wide = {"a": "é" * 1000, **{f"k{n}": "x" * 1000 for n in range(7)}}
    assert len(encode_fields(wide)) < MAX_FIELDS_BYTES < len(encode_fields(wide).encode())
    assert refused(fields=wide) == ["fields"]  # 8 KB counted in bytes, not characters


def test_every_broken_part_is_named_at_once() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadFields.parse(name=" ", email="ada@example.com", tags=["ok", "bad/"], fields={"Bad": 1})

    assert fields_of_error(caught.value) == ["name", "tags[1]", "fields.Bad"]


values = st.one_of(
    st.text(max_size=40).filter(lambda t: "\x00" not in t),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@given(st.dictionaries(keys, values, max_size=20), st.dictionaries(keys, values | st.none()))
def test_merging_sets_removes_and_keeps_key_by_key(
    current: dict[str, Any], patch: dict[str, Any]
) -> None:
    lead = a_lead(fields=current)
    patch = dict(list(patch.items())[:MAX_FIELDS])
    merged = {**current, **patch}
    kept = {key: value for key, value in merged.items() if value is not None}
    if len(kept) > MAX_FIELDS or len(encode_fields(kept).encode()) > MAX_FIELDS_BYTES:
        with pytest.raises(ValidationFailed) as caught:  # only the merged limits refuse it
            LeadChanges.parse(fields=patch).apply_to(lead, T0)
        assert fields_of_error(caught.value) == ["fields"]
        return
    changed = LeadChanges.parse(fields=patch).apply_to(lead, T0)
    for key, value in patch.items():
        if value is None:
            assert key not in changed.fields
        else:
            assert json.dumps(changed.fields[key]) == json.dumps(value)
    for key in current.keys() - patch.keys():
        assert changed.fields[key] == current[key]
    assert changed.tags == lead.tags  # untouched


def test_an_update_replaces_tags_and_may_change_only_them() -> None:
    lead = a_lead(tags=("old",), fields={"k": 1})

    changed = LeadChanges.parse(tags=["New", "new "]).apply_to(lead, T0)

    assert (changed.tags, changed.fields, changed.name) == (("new",), {"k": 1}, lead.name)
    assert LeadChanges.parse(tags=[]).apply_to(lead, T0).tags == ()


def test_an_update_past_the_field_limit_is_refused() -> None:
    lead = a_lead(fields={f"k{n}": n for n in range(MAX_FIELDS)})

    with pytest.raises(ValidationFailed) as caught:
        LeadChanges.parse(fields={"one_more": 1}).apply_to(lead, T0)
    assert fields_of_error(caught.value) == ["fields"]
    swapped = LeadChanges.parse(fields={"one_more": 1, "k0": None}).apply_to(lead, T0)
    assert len(swapped.fields) == MAX_FIELDS


# --- template variables ---------------------------------------------------------------


def test_template_variables_hold_the_lead_and_its_fields_as_text() -> None:
    lead = a_lead(
        name="  Ada   King Lovelace", fields={"city": "Leeds", "age": 34, "vip": True, "r": 0.5}
    )

    assert template_variables(lead) == {
        "name": "  Ada   King Lovelace",
        "first_name": "Ada",
        "email": "ada@example.com",
        "source": "web",
        "city": "Leeds",
        "age": "34",
        "vip": "true",
        "r": "0.5",
    }


def test_a_custom_first_name_wins_but_never_over_the_leads_own_values() -> None:
    lead = a_lead(fields={"first_name": "Addie", "email": "x@y.z", "name": "X", "source": "s"})

    variables = template_variables(lead)

    assert variables["first_name"] == "Addie"
    assert (variables["name"], variables["email"], variables["source"]) == (
        "Ada Lovelace",
        "ada@example.com",
        "web",
    )
