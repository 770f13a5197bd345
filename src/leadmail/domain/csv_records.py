"""Reading CSV a piece at a time: bytes in, records out, in flat memory.

UTF-8 with or without a byte order mark, CRLF or LF line ends, quoted fields holding the
delimiter, quotes ("") and line breaks, and a delimiter of ``,`` or ``;`` sniffed from the
header line. The standard library's csv module parses; this module only hands it whole
records, so a quoted line break that falls between two pieces never cuts a record.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field

DELIMITERS = (",", ";")
# Lines as a file opened with newline="" gives them to csv: ending in CRLF, CR or LF.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")
# A field may be as long as a file may be (csv's default limit is 128 KiB).
csv.field_size_limit(1 << 30)


class NotText(ValueError):
    """The file is not UTF-8 text."""


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


@dataclass
class RecordSplitter:
    """Text in (any pieces), lines out grouped into whole records: a line break ends a
    record only where the quotes before it are balanced. (A stray quote in an unquoted
    field, which csv reads as text, unbalances them: the record then waits for the next
    quote or the end of the file, as csv itself reads on.)"""

    _pending: list[str] = field(default_factory=list)  # lines of an unfinished record
    _odd: bool = False  # the pending lines hold an odd number of quotes
    _tail: str = ""  # text after the last line break

    def feed(self, text: str) -> list[str]:
        """The whole records that ``text`` completes, as lines (with their line ends)."""
        text = self._tail + text
        lines = _LINE.findall(text)
        end = sum(map(len, lines))
        if lines and lines[-1].endswith("\r") and end == len(text):
            end -= len(lines.pop())  # its LF may come with the next piece
        self._tail = text[end:]
        done: list[str] = []
        pending, odd = self._pending, self._odd
        for line in lines:
            pending.append(line)
            if line.count('"') % 2:
                odd = not odd
            if not odd:
                done.extend(pending)
                pending = []
        self._pending, self._odd = pending, odd
        return done

    def close(self) -> list[str]:
        """What is left at the end of the file."""
        rest = [*self._pending, self._tail] if self._tail else self._pending
        self._pending, self._odd, self._tail = [], False, ""
        return rest


async def records(pieces: AsyncIterable[bytes]) -> AsyncIterator[list[list[str]]]:
    """The file's records, a piece's worth at a time (the header record first, alone).
    Blank lines are empty records: they keep their row numbers. Raises NotText for bytes
    that are not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    splitter = RecordSplitter()
    delimiter: str | None = None
    buffered: list[str] = []

    def parse(lines: list[str]) -> list[list[str]]:
        assert delimiter is not None
        return list(csv.reader(lines, delimiter=delimiter, strict=False))

    async for piece in pieces:
        try:
            text = decoder.decode(piece)
        except UnicodeDecodeError as e:
            raise NotText(str(e)) from e
        lines = splitter.feed(text)
        if delimiter is None:
            buffered.extend(lines)
            header, rest = _header_lines(buffered)
            if not header:
                continue
            delimiter = sniff_delimiter("".join(header))
            buffered = []
            yield parse(header)
            lines = rest
        if lines:
            yield parse(lines)
    try:
        text = decoder.decode(b"", final=True)
    except UnicodeDecodeError as e:
        raise NotText(str(e)) from e
    lines = [*buffered, *splitter.feed(text), *splitter.close()]
    if delimiter is None:
        header, lines = _header_lines(lines, final=True)
        if not header:
            return
        delimiter = sniff_delimiter("".join(header))
        yield parse(header)
    if lines:
        yield parse(lines)


def _header_lines(lines: list[str], *, final: bool = False) -> tuple[list[str], list[str]]:
    """The header record's lines (the first record: the splitter only hands out whole
    records, so it ends at the first line with balanced quotes) and those after it."""
    odd = False
    for index, line in enumerate(lines):
        if line.count('"') % 2:
            odd = not odd
        if not odd:
            return lines[: index + 1], lines[index + 1 :]
    return (lines, []) if final else ([], lines)
