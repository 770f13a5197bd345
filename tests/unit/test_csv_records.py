"""The record splitter against the csv module: any well-formed file, cut into pieces
anywhere, gives the rows csv gives for the whole text (hypothesis); a record longer than the
limit is one LongRecord row, never held, and the records after it are found as before; a
CR at the end of a piece; and the reader's memory stays flat over a line of many MB."""

from __future__ import annotations

import asyncio
import csv
import io
import itertools
import tracemalloc
from collections.abc import AsyncIterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadmail.domain.csv_records import SLICE_BYTES, LongRecord, RecordSplitter, Row, records

BIG = 1 << 30  # a limit no test record reaches

# Unquoted cells: no quote, separator or line break. Quoted cells: anything, quotes doubled.
PLAIN = st.text(alphabet="ab é1 ", max_size=6)
QUOTED = st.text(alphabet='ab,;"\r\n é', max_size=8).map(lambda s: '"' + s.replace('"', '""') + '"')
RECORD = st.lists(st.one_of(PLAIN, QUOTED), min_size=1, max_size=5).map(",".join)
LINE_END = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def csv_files(draw: st.DrawFn, line_ends: st.SearchStrategy[str] = LINE_END) -> list[str]:
    """A file's records, each with its line end (the last one maybe without)."""
    texts = draw(st.lists(RECORD, min_size=1, max_size=12))
    ends = [draw(line_ends) for _ in texts]
    if texts[-1] and draw(st.booleans()):
        ends[-1] = ""
    return [text + end for text, end in zip(texts, ends, strict=True)]


def cuts(data: Sequence[object] | str | bytes) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(data)), max_size=8).map(sorted)


def pieces_of(data: bytes, at: list[int]) -> list[bytes]:
    return [data[a:b] for a, b in itertools.pairwise([0, *at, len(data)])]


async def _stream(pieces: Sequence[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


def read(pieces: Sequence[bytes], limit: int = BIG) -> list[Row]:
    async def collect() -> list[Row]:
        return [row async for rows in records(_stream(pieces), limit) for row in rows]

    return asyncio.run(collect())


def split(texts: Sequence[str], limit: int) -> list[str | LongRecord]:
    splitter = RecordSplitter(limit)
    found = [record for text in texts for record in splitter.feed(text)]
    return [*found, *splitter.close()]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_file_cut_anywhere_reads_as_csv_reads_the_whole(data: st.DataObject) -> None:
    text = "".join(data.draw(csv_files()))
    encoded = text.encode()
    at = data.draw(cuts(encoded))  # bytes: a character may be cut in two as well

    expected = list(csv.reader(io.StringIO(text, newline=""), strict=False))

    assert read(pieces_of(encoded, at)) == expected


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_record_longer_than_the_limit_is_one_row_and_the_rest_as_before(
    data: st.DataObject,
) -> None:
    # One line end per file: then each record's text is exactly as drawn (a CR, then a
    # blank line's LF, would be one CRLF).
    lines = data.draw(csv_files(st.shared(LINE_END, key="end")))
    limit = data.draw(st.integers(1, 30))
    text = "".join(lines)
    at = data.draw(cuts(text))

    expected = [
        LongRecord(len(line)) if len(line) > limit else next(csv.reader([line]), [])
        for line in lines
    ]
    got = split([text[a:b] for a, b in itertools.pairwise([0, *at, len(text)])], limit)

    assert [r if isinstance(r, LongRecord) else next(csv.reader([r]), []) for r in got] == (
        expected
    )


def test_a_long_line_across_many_pieces_is_one_failed_row_and_the_next_rows_are_read() -> None:
    long_line = "x@example.com," + "a" * 10_000 + "\r\n"
    data = ("email,name\r\n" + long_line + "ada@example.com,Ada\r\n").encode()
    pieces = [data[i : i + 7] for i in range(0, len(data), 7)]

    assert read(pieces, limit=1_000) == [
        ["email", "name"],
        LongRecord(len(long_line)),
        ["ada@example.com", "Ada"],
    ]


def test_the_quotes_of_a_long_record_are_counted_so_its_line_breaks_stay_inside() -> None:
    # A quoted note of many lines, longer than the limit: the lines inside its quotes are
    # not records; the record after it is row 3, as csv counts it.
    note = '"' + "line\r\n" * 500 + 'with ""quotes"" and, commas"'
    data = f'email,note\nx@example.com,{note}\nada@example.com,"short\nnote"\n'

    rows = read([data.encode()], limit=200)

    assert rows == [
        ["email", "note"],
        LongRecord(len(f"x@example.com,{note}\n")),
        ["ada@example.com", "short\nnote"],
    ]
    assert len(rows) == len(list(csv.reader(io.StringIO(data, newline=""))))


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["a\r", "\nb\n"], ["a\r\n", "b\n"]),  # a CRLF cut between two pieces
        (["a\r", "b\n"], ["a\r", "b\n"]),  # a bare CR: a line end of its own
        (["a\r", "", "\n"], ["a\r\n"]),  # an empty piece between changes nothing
        (["a\r"], ["a\r"]),  # the file's last character
        (['"a\r', '\nb"\r', "\n"], ['"a\r\nb"\r\n']),  # inside quotes: part of the record
        (["a\r", "\r", "\n"], ["a\r", "\r\n"]),  # a blank line after it
    ],
)
def test_a_cr_at_the_end_of_a_piece_waits_for_a_possible_lf(
    pieces: list[str], expected: list[str]
) -> None:
    assert split(pieces, BIG) == expected
    assert split(["".join(pieces)], BIG) == expected


@pytest.mark.parametrize(
    "pieces",
    [
        ['"abc\ndef', 'g"\n'],  # no quote after the line break, one before it
        ['x,"a""b\nc""', '""d"\r', "\ne\n"],  # doubled quotes passed over, and cut
        ['x,"a"', '"b"\n'],  # a doubled quote cut in two
    ],
)
def test_quoted_line_breaks_and_doubled_quotes_whatever_the_cuts(pieces: list[str]) -> None:
    text = "".join(pieces)
    records = [r for r in split(pieces, BIG) if isinstance(r, str)]

    assert records == _joined(list(io.StringIO(text, newline="")))


def _joined(lines: list[str]) -> list[str]:
    """Lines joined into records while their quotes are unbalanced."""
    records: list[str] = []
    pending = ""
    for line in lines:
        pending += line
        if pending.count('"') % 2 == 0:
            records.append(pending)
            pending = ""
    return [*records, pending] if pending else records


def test_a_cr_held_back_counts_toward_the_limit() -> None:
    assert split(["abc\r", "\n"], 4) == [LongRecord(5)]
    assert split(["abc\r", "d"], 4) == ["abc\r", "d"]


def test_a_line_of_many_megabytes_is_read_in_flat_memory() -> None:
    """The splitter keeps no more of a record than the limit, and the reader no more than a
    slice of a piece, however long the line (the old reader kept the whole line, and took
    time quadratic in its length)."""
    piece = b"a" * (1 << 20)
    limit = 256 * 1024

    async def run() -> list[Row]:
        async def stream() -> AsyncIterator[bytes]:
            yield b"email\n"
            for _ in range(24):  # 24 MiB with no line break
                yield piece
            yield b"\nada@example.com\n"

        return [row async for rows in records(stream(), limit) for row in rows]

    tracemalloc.start()
    try:
        rows = asyncio.run(run())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert rows == [["email"], LongRecord(24 * len(piece) + 1), ["ada@example.com"]]
    assert peak < 2 * limit + 4 * SLICE_BYTES + (1 << 20), peak


def test_each_slice_of_a_piece_gives_its_own_list_of_rows() -> None:
    """A reader can let other work in between any two SLICE_BYTES of the file, even inside a
    long record (the lists are empty there)."""
    data = b"email\n" + b"a" * (4 * SLICE_BYTES) + b"\n"

    async def run() -> list[list[Row]]:
        return [rows async for rows in records(_stream([data]), limit=SLICE_BYTES)]

    slices = asyncio.run(run())

    assert len(slices) >= 5
    assert [row for rows in slices for row in rows] == [["email"], LongRecord(4 * SLICE_BYTES + 1)]
