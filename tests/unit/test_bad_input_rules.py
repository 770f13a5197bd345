"""The domain's and the HTTP adapter's rules behind issue 24's 4xx answers: JSON depth,
CSV formula cells, one-line text, empty filter lists, numbers past a double."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.adapters.http.json_depth import MAX_JSON_DEPTH, too_deep
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import neutralised, plain
from leadmail.domain.segments import LeadFilter
from leadmail.domain.text import breaks_line


def nested(depth: int, width: int = 1) -> bytes:
    """Arrays and objects in turn, ``depth`` deep; each array holds ``width - 1`` empty
    arrays beside the deeper value, each object a string of brackets (text, not depth)."""
    value: object = 1
    for level in range(depth):
        value = [[] for _ in range(width - 1)] + [value] if level % 2 else {"k": value, "s": "[[{{"}
    return json.dumps(value).encode()


@pytest.mark.parametrize("width", [1, 3])
def test_too_deep_is_past_the_limit_and_not_before(width: int) -> None:
    assert not too_deep(nested(MAX_JSON_DEPTH, width))
    assert too_deep(nested(MAX_JSON_DEPTH + 1, width))
    assert too_deep(b"[" * 100_000)  # unclosed: the decoder would recurse all the same
    assert not too_deep(b"[" * 10 + b"}" * 100)  # unbalanced, shallow: the decoder says


@given(st.recursive(st.none() | st.integers() | st.text(), lambda inner: st.lists(inner)
       | st.dictionaries(st.text(), inner), max_leaves=40))  # fmt: skip
def test_too_deep_agrees_with_the_depth_of_any_json(value: object) -> None:
    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    assert too_deep(json.dumps(value).encode()) == (depth(value) > MAX_JSON_DEPTH)


@pytest.mark.parametrize(
    ("cell", "exported"),
    [
        ("=1+2", "'=1+2"),
        ("+44 20 7946 0958", "'+44 20 7946 0958"),
        ("-3", "'-3"),
        ("@cmd", "'@cmd"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        (" \n =x", "' \n =x"),
        ("'=x", "''=x"),
        ("'x", "'x"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_formula_cells_get_a_quote(cell: str, exported: str) -> None:
    assert neutralised(cell) == exported
    assert plain(exported) == cell


@given(st.text(alphabet=st.sampled_from("'=+-@\t\r \nab")) | st.text())
def test_plain_undoes_neutralised_for_any_text(cell: str) -> None:
    assert plain(neutralised(cell)) == cell


@given(st.text())
def test_an_exported_cell_never_starts_a_formula(cell: str) -> None:
    out = neutralised(cell)
    assert out[:1] not in ("\t", "\r")
    assert out.lstrip()[:1] not in ("=", "+", "-", "@")


@pytest.mark.parametrize("name", ["tag", "any_tag", "not_tag"])
def test_an_empty_list_is_no_filter_and_is_refused(name: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadFilter.from_json({name: []})

    assert [e.field for e in caught.value.errors] == [name]
    assert LeadFilter.from_json({}) == LeadFilter()


@pytest.mark.parametrize("number", ["9" * 309, "-" + "9" * 309, "1e999"])
def test_a_number_past_a_double_is_refused_by_name(number: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadFilter.parse([("field.age", number)])

    assert [e.field for e in caught.value.errors] == ["field.age"]


@given(st.text())
def test_one_line_text_agrees_with_the_characters_it_refuses(text: str) -> None:
    refused = set(
        "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        "\u200e\u200f\u061c\u200b\u2060\ufeff"
    )
    joiners = "\u200c\u200d"
    padded = f" {text} "
    expected = any(
        (ord(c) < 0x20 and c != "\t")
        or 0x7F <= ord(c) <= 0x9F
        or c in refused
        or (c in joiners and any(n.isspace() or n in joiners for n in padded[i : i + 3 : 2]))
        for i, c in enumerate(text)
    )
    assert breaks_line(text) == expected
