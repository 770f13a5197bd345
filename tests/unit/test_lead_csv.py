"""CSV as leads arrive in it: dialects, pieces cut anywhere, the header's columns, bad rows;
and any lead set survives export then import (hypothesis)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadmail.domain.csv_records import RecordSplitter, Row, records, sniff_delimiter
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import Columns, csv_text, export_header, export_row
from leadmail.domain.leads import Lead, LeadFields
from leadmail.domain.text import breaks_line

AT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
LIMIT = 1 << 20


async def _pieces(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def read(data: bytes, size: int = 1 << 20) -> list[list[str]]:
    async def collect() -> list[Row]:
        return [r async for chunk in records(_pieces(data, size), LIMIT) for r in chunk]

    found: list[list[str]] = []
    for row in asyncio.run(collect()):
        assert isinstance(row, list)  # no row is longer than the limit here
        found.append(row)
    return found


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_bom_crlf_quotes_and_line_breaks_whatever_the_pieces(size: int) -> None:
    data = (
        '\ufeffemail,name,note\r\nada@example.com,"Lovelace, Ada","line one\r\nline two"\r\n'
        'grace@example.com,Grace,"she said ""hi"""\r\n'
    ).encode()

    assert read(data, size) == [
        ["email", "name", "note"],
        ["ada@example.com", "Lovelace, Ada", "line one\r\nline two"],
        ["grace@example.com", "Grace", 'she said "hi"'],
    ]


def test_more_records_than_one_parse_come_in_slices_whole() -> None:
    many = "email,note\n" + "".join(f'a{n}@example.com,"x\ny {n}"\n' for n in range(2_500))

    rows = read(many.encode(), 4096)

    assert len(rows) == 2_501
    assert rows[-1] == ["a2499@example.com", "x\ny 2499"]
    assert all(row[1].startswith("x\ny ") for row in rows[1:])


@pytest.mark.parametrize("size", [1, 5, 1 << 20])
def test_semicolons_lf_and_a_bare_cr_end_lines(size: int) -> None:
    data = b'Email;Name\nada@example.com;Ada\rgrace@example.com;"A; B"\n\nlast@example.com;L'

    assert read(data, size) == [
        ["Email", "Name"],
        ["ada@example.com", "Ada"],
        ["grace@example.com", "A; B"],
        [],  # a blank line keeps its row number
        ["last@example.com", "L"],
    ]


def test_a_multibyte_character_cut_between_pieces_is_whole() -> None:
    assert read("email,name\nz@example.com,Zoë Ünal\n".encode(), 1)[1] == [
        "z@example.com",
        "Zoë Ünal",
    ]


def test_delimiter_sniffed_from_the_header_outside_quotes() -> None:
    assert sniff_delimiter("email;name;city\r\n") == ";"
    assert sniff_delimiter('email,"a;b;c"\n') == ","
    assert sniff_delimiter("email\n") == ","


def test_the_splitter_holds_a_record_until_its_quotes_close() -> None:
    splitter = RecordSplitter(LIMIT)

    assert splitter.feed('a,"one\r\n') == []
    assert splitter.feed('two"\r\nb,c\r') == ['a,"one\r\ntwo"\r\n']
    assert splitter.feed("\nd,e") == ["b,c\r\n"]  # a CR waits for a possible LF
    assert splitter.close() == ["d,e"]


def test_columns_by_header_any_case_custom_keys_lower_cased_with_underscores() -> None:
    columns = Columns.parse([" EMAIL", "Name", "Course of interest", "city", "TAGS"])
    values = ["Ada@Example.com", "Ada", "Data science", "01234", "VIP; evening|vip"]

    fields = columns.fields_of(values, tags=("imported",))

    assert fields == LeadFields(
        name="Ada",
        email="Ada@example.com",
        tags=("evening", "imported", "vip"),
        fields={"course_of_interest": "Data science", "city": "01234"},  # text, as written
    )
    assert columns.texts == frozenset({"name"})


def test_a_header_that_makes_no_key_is_named_as_written() -> None:
    with pytest.raises(ValidationFailed) as raised:
        Columns.parse(["email", "Favourite Colour!", "name", "Name "])

    named = {e.field: e.message for e in raised.value.errors}
    assert set(named) == {"Favourite Colour!", "Name "}
    assert named["Favourite Colour!"] == (
        "(column 2) cannot be a custom field: 'favourite_colour!' is not a field name:"
        " a lower-case letter, then up to 63 of a-z 0-9 _"
    )
    assert named["Name "] == "(column 4) is the same column as 'name'"


def test_a_column_without_a_header_is_not_read() -> None:
    columns = Columns.parse(["email", "name", "", " "])

    assert columns.fields_of(["ada@example.com", "Ada", "x", "y"]).fields == {}


def test_no_email_column_is_refused() -> None:
    with pytest.raises(ValidationFailed) as raised:
        Columns.parse(["name", "city"])

    assert [e.field for e in raised.value.errors] == ["email"]
    # One sentence, the field's name its subject, as the API's `error` and the CLI say it.
    assert raised.value.described == (
        "`email` is missing from the header row: every file needs this column"
    )


def test_a_bad_row_names_its_cells_by_column() -> None:
    columns = Columns.parse(["email", "phone", "tags", "city"])

    with pytest.raises(ValidationFailed) as raised:
        columns.fields_of(["not-an-email", "call me", "ok;b@d", "x" * 1001])

    assert [e.field for e in raised.value.errors] == ["email", "phone", "tags", "city"]


def test_without_a_name_column_a_lead_is_named_by_its_local_part() -> None:
    fields = Columns.parse(["email"]).fields_of(["ada.l@example.com"])

    assert fields.name == "ada.l"


def test_blank_custom_cells_are_no_value_and_short_rows_are_blank() -> None:
    columns = Columns.parse(["email", "name", "city", "age"])

    assert columns.fields_of(["a@example.com", "A", ""]).fields == {}


_TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"))
_LINE = _TEXT.filter(lambda t: not breaks_line(t))  # a name's or a source's rule
_TAG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.:", min_size=1, max_size=10)


@st.composite
def leads(draw: st.DrawFn) -> list[Lead]:
    count = draw(st.integers(0, 6))
    keys = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), max_size=4))
    found = []
    for number in range(count):
        name = draw(_LINE.map(str.strip).filter(lambda t: 0 < len(t) <= 200))
        fields = {
            key: value
            for key in keys
            if (value := draw(_TEXT.filter(lambda t: 0 < len(t) <= 50) | st.just("")))
        }
        found.append(
            Lead(
                lead_id=f"ld_{number}",
                account_id="acc",
                name=name,
                email=f"lead{number}@example.com",
                source=draw(_LINE.map(str.strip).filter(lambda t: len(t) <= 100)),
                note=draw(_TEXT.filter(lambda t: len(t) <= 300)),
                phone=draw(st.sampled_from(["", "+44 20 7946 0958", "(555) 010-0199"])),
                created_at=AT,
                updated_at=AT,
                tags=tuple(sorted(set(draw(st.lists(_TAG, max_size=4))))),
                fields=fields,
            )
        )
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leads(), st.integers(1, 40))
def test_any_leads_with_text_fields_survive_export_then_import(
    original: list[Lead], size: int
) -> None:
    """Custom values that are text (not blank: a blank cell is no value) come back as they
    were, and everything else too, whatever the pieces the file arrives in."""
    keys = sorted({key for lead in original for key in lead.fields})
    text = csv_text([export_header(keys), *(export_row(lead, keys) for lead in original)])

    rows = read(text.encode(), size)
    columns = Columns.parse(rows[0])
    back = [columns.fields_of(values) for values in rows[1:]]

    assert back == [
        LeadFields(
            lead.name, lead.email, lead.source, lead.note, lead.phone, lead.tags, lead.fields
        )
        for lead in original
    ]
