"""Reading CSV a piece at a time: bytes in, records out, in linear time and bounded memory.

UTF-8 with or without a byte order mark, CRLF, LF or CR line ends, quoted fields holding
the delimiter, quotes ("") and line breaks, and a delimiter of ``,`` or ``;`` sniffed from
the header line. The standard library's csv module parses; this module only hands it whole
records, so a quoted line break that falls between two pieces never cuts a record.

Every character is looked at a bounded number of times whatever the pieces: each new piece
is searched once for line breaks (outside quotes) and quotes (str.find and str.count, at C
speed); a quoted field's own line breaks are passed over, not looked at one by one.
A record longer than the reader's limit is never held nor parsed: its quotes are still
counted (so the records after it are found as csv would find them), and it comes out as a
LongRecord, one row that was not read.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

DELIMITERS = (",", ";")
# Bytes of the file decoded, split and parsed at a time (one list of rows out), so that a
# reader can let other work in between two; a slice dense in line breaks and quotes (the
# splitter's work is per break and per quote, not per byte) is cut further, to about
# SLICE_MARKS of them a part. Either is a millisecond or two of work.
SLICE_BYTES = 1 << 16
SLICE_MARKS = 1_000
# Inside quotes, from a doubled quote on: what goes on (no quote, or quotes doubled),
# matched at C speed; it ends at the quote that closes the field, or at the end of the text.
_QUOTED = re.compile(r'(?:[^"]++|"")*+')
# A field may be as long as a record may be (csv's default limit is 128 KiB); the record's
# limit is the reader's.
csv.field_size_limit(1 << 30)


class NotText(ValueError):
    """The file is not UTF-8 text."""


@dataclass(frozen=True, slots=True)
class LongRecord:
    """A record longer than the limit: one row of the file, passed over unread."""

    chars: int  # its length, its line breaks included


Record = str | LongRecord  # a record's text (its line end kept), or one too long
Row = list[str] | LongRecord  # a record's fields, or one too long


def sniff_delimiter(line: str) -> str:
    """``;`` when the header line has more of them than commas outside quotes, else ``,``."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for character in line:
        if character == '"':
            quoted = not quoted
        elif not quoted and character in counts:
            counts[character] += 1
    return ";" if counts[";"] > counts[","] else ","


class RecordSplitter:
    """Text in (any pieces), whole records out, each one text (its line breaks inside
    quotes, its line end kept), as csv reads them: a line break ends a record only where
    the quotes before it are balanced. (A stray quote in an unquoted field, which csv reads
    as text, unbalances them: the record then waits for the next quote or the end of the
    file.) A record of more than ``limit`` characters comes out as a LongRecord; no more
    than ``limit`` characters of a record are ever held."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[str] = []  # the unfinished record's text so far (unless too long)
        self._size = 0  # its length
        self._odd = False  # it holds an odd number of quotes
        self._cr = False  # the last piece ended with a CR, whose LF may open the next

    def feed(self, text: str) -> list[Record]:
        """The whole records that ``text`` completes."""
        done: list[Record] = []
        size = len(text)
        if not size:
            return done
        at = 0
        if self._cr:  # the last piece ended a line with a CR, outside quotes
            self._cr = False
            if text[0] == "\n":  # the LF of a CRLF cut in two
                self._take(text, 0, 1)
                at = 1
            done.append(self._record())
        # Where the next LF and CR are (size: none), looked for again only once passed.
        lf = cr = -1
        while at < size:
            if self._odd:  # inside quotes: line breaks are the field's, up to a quote
                end = _after_quote(text, at)
                self._take(text, at, end)
                at = end
                continue
            if lf < at:
                lf = text.find("\n", at) % (size + 1)  # -1: size
            if cr < at:
                cr = text.find("\r", at) % (size + 1)
            if cr < lf:
                end = cr + 2 if cr + 1 < size and text[cr + 1] == "\n" else cr + 1
            else:
                end = min(lf + 1, size)
            self._take(text, at, end)
            at = end
            if self._odd or (lf == size and cr == size):
                continue  # a line break inside quotes, or none: the record goes on
            if end == size and text[-1] == "\r":
                self._cr = True  # its LF may open the next piece: the record ends there
            else:
                done.append(self._record())
        return done

    def close(self) -> list[Record]:
        """What is left at the end of the file."""
        self._cr = self._odd = False
        return [self._record()] if self._size else []

    def _take(self, text: str, start: int, end: int) -> None:
        """Add ``text[start:end]`` to the unfinished record."""
        if text.count('"', start, end) % 2:
            self._odd = not self._odd
        self._size += end - start
        if self._size <= self._limit:
            self._parts.append(text[start:end])
        elif self._parts:
            self._parts = []  # too long: its text is not kept

    def _record(self) -> Record:
        """The unfinished record, finished."""
        parts, size = self._parts, self._size
        self._parts, self._size = [], 0
        if size > self._limit:
            return LongRecord(size)
        return "".join(parts)


def _after_quote(text: str, at: int) -> int:
    """Just after the next quote from ``at`` that is not one of two (doubled quotes are
    passed over at C speed), or the end of the text."""
    quote = text.find('"', at)
    if quote < 0:
        return len(text)
    if text.startswith('""', quote):
        found = _QUOTED.match(text, quote)  # it always matches (maybe nothing)
        quote = quote if found is None else found.end()
    return min(quote + 1, len(text))


async def records(pieces: AsyncIterable[bytes], limit: int) -> AsyncIterator[list[Row]]:
    """The file's rows, one list per slice of it (SLICE_BYTES, or less where it is dense;
    the header record first, alone; a list may be empty, inside a long record): a reader
    may let other work in between two.
    A record of more than ``limit`` characters is a LongRecord; blank lines are empty rows:
    they keep their row numbers. Raises NotText for bytes that are not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    splitter = RecordSplitter(limit)
    reader = _Parser()
    async for piece in pieces:
        for start in range(0, len(piece), SLICE_BYTES):
            try:
                text = decoder.decode(piece[start : start + SLICE_BYTES])
            except UnicodeDecodeError as e:
                raise NotText(str(e)) from e
            for part in _parts(text):
                for rows in reader.parse(splitter.feed(part)):
                    yield rows
    try:
        text = decoder.decode(b"", final=True)
    except UnicodeDecodeError as e:
        raise NotText(str(e)) from e
    for rows in reader.parse([*splitter.feed(text), *splitter.close()]):
        yield rows


def _parts(text: str) -> list[str]:
    """The text, cut into parts of about SLICE_MARKS line breaks and quotes each."""
    marks = text.count("\n") + text.count("\r") + text.count('"')
    if marks <= SLICE_MARKS:
        return [text]
    step = -(-len(text) * SLICE_MARKS // marks)
    return [text[start : start + step] for start in range(0, len(text), step)]


class _Parser:
    """Records to rows, by csv, with the delimiter sniffed from the first record."""

    def __init__(self) -> None:
        self._delimiter: str | None = None

    def parse(self, records: list[Record]) -> list[list[Row]]:
        """The rows: the header record's alone first, then the others together."""
        found: list[list[Row]] = []
        if self._delimiter is None:
            if not records:
                return [[]]
            header, *records = records
            self._delimiter = "," if isinstance(header, LongRecord) else sniff_delimiter(header)
            found.append(self._rows([header]))
        found.append(self._rows(records))
        return found

    def _rows(self, records: list[Record]) -> list[Row]:
        rows: list[Row] = []
        texts: list[str] = []
        for record in records:
            if isinstance(record, LongRecord):
                rows += csv.reader(texts, delimiter=self._delimiter or ",", strict=False)
                rows.append(record)
                texts = []
            else:
                texts.append(record)
        rows += csv.reader(texts, delimiter=self._delimiter or ",", strict=False)
        return rows
