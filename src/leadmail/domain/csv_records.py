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
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass, field

DELIMITERS = (",", ";")
# Records parsed per call to csv (and yielded together): small enough that a reader can let
# other work in between them.
SLICE_LINES = 1_000
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
    """Text in (any pieces), whole records out, each one text (its line breaks inside
    quotes, its line end kept), as csv reads them: a line break ends a
    record only where the quotes before it are balanced. (A stray quote in an unquoted
    field, which csv reads as text, unbalances them: the record then waits for the next
    quote or the end of the file, as csv itself reads on.)"""

    _pending: list[str] = field(default_factory=list)  # lines of an unfinished record
    _odd: bool = False  # the pending lines hold an odd number of quotes
    _tail: str = ""  # text after the last line break

    def feed(self, text: str) -> list[str]:
        """The whole records that ``text`` completes."""
        text = self._tail + text
        lines = _LINE.findall(text)
        end = sum(map(len, lines))
        if lines and lines[-1].endswith("\r") and end == len(text):
            end -= len(lines.pop())  # its LF may come with the next piece
        self._tail = text[end:]
        done: list[str] = []
        pending, odd = self._pending, self._odd
        for line in lines:
            if line.count('"') % 2:
                odd = not odd
            if not odd and not pending:
                done.append(line)  # the usual case: a record of one line
            elif not odd:
                pending.append(line)
                done.append("".join(pending))
                pending = []
            else:
                pending.append(line)
        self._pending, self._odd = pending, odd
        return done

    def close(self) -> list[str]:
        """What is left at the end of the file."""
        rest = "".join([*self._pending, self._tail])
        self._pending, self._odd, self._tail = [], False, ""
        return [rest] if rest else []


async def records(pieces: AsyncIterable[bytes]) -> AsyncIterator[list[list[str]]]:
    """The file's records, up to SLICE_LINES at a time (the header record first, alone).
    Blank lines are empty records: they keep their row numbers. Raises NotText for bytes
    that are not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    splitter = RecordSplitter()
    delimiter: str | None = None

    def parsed(texts: list[str]) -> Iterator[list[list[str]]]:
        nonlocal delimiter
        if delimiter is None and texts:
            delimiter = sniff_delimiter(texts[0])
            yield list(csv.reader(texts[:1], delimiter=delimiter, strict=False))
            texts = texts[1:]
        for start in range(0, len(texts), SLICE_LINES):
            part = texts[start : start + SLICE_LINES]
            yield list(csv.reader(part, delimiter=delimiter or ",", strict=False))

    async for piece in pieces:
        try:
            text = decoder.decode(piece)
        except UnicodeDecodeError as e:
            raise NotText(str(e)) from e
        for found in parsed(splitter.feed(text)):
            yield found
    try:
        text = decoder.decode(b"", final=True)
    except UnicodeDecodeError as e:
        raise NotText(str(e)) from e
    for found in parsed([*splitter.feed(text), *splitter.close()]):
        yield found
