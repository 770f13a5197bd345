"""An import's file as the job reads it: the header checked as the upload arrives, and
which row of each email is the one imported."""

from __future__ import annotations

import csv
import re
from collections.abc import AsyncIterable

from leadmail.domain.addresses import email_key
from leadmail.domain.csv_records import NotText, sniff_delimiter
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import MAX_HEADER_BYTES, Columns
from leadmail.domain.leads import RULES

_MARKS = re.compile(rb'["\r\n]')  # what can end the header row, or quote a break in it


class LastRows:
    """The number of data rows, and each email key's last row (the one imported)."""

    def __init__(self) -> None:
        self.rows = 0
        self.by_key: dict[str, int] = {}

    def see(self, row: int, email: str | None) -> None:
        self.rows += 1
        if not email:
            return
        try:
            self.by_key[email_key(RULES["email"](email))] = row
        except ValueError:
            return


def why(error: Exception) -> str:
    if isinstance(error, ValidationFailed):
        return error.message
    if isinstance(error, NotText):
        return "the file is not UTF-8 text"
    if isinstance(error, csv.Error):
        return f"the file is not CSV ({error}); the rows counted were written"
    return "the import stopped on an unexpected error; the rows counted were written"


async def header_bytes(stream: AsyncIterable[bytes]) -> bytes:
    """The body's first bytes, up to and including its header row (or all of it, if
    shorter), with the header checked. Raises ValidationFailed."""
    head = bytearray()
    scan = HeaderScan()
    iterator = aiter(stream)
    while True:
        end = scan.end(head)
        if end is not None:
            break
        if len(head) > MAX_HEADER_BYTES:
            raise ValidationFailed.one("body", "has a header row longer than 1 MiB")
        try:
            head += await anext(iterator)
        except StopAsyncIteration:
            end = len(head)
            break
    if not head.strip():
        raise ValidationFailed.one("body", "is empty: the file needs a header row")
    try:
        text = bytes(head[:end]).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValidationFailed.one("body", "must be UTF-8 text") from e
    try:
        header = next(csv.reader([text], delimiter=sniff_delimiter(text), strict=False), [])
    except csv.Error as e:
        raise ValidationFailed.one("body", f"has a header row that is not CSV: {e}") from e
    Columns.parse(header)
    return bytes(head)


class HeaderScan:
    """Where the first record of a growing head ends (after its line break: CRLF, CR or
    LF), each byte looked at once however many pieces it comes in."""

    def __init__(self) -> None:
        self._at = 0  # where the next look starts
        self._quoted = False

    def end(self, head: bytes | bytearray) -> int | None:
        """The first record's end in ``head`` (the same head, grown), if it has one yet."""
        for mark in _MARKS.finditer(head, self._at):
            index = mark.start()
            if head[index] == 0x22:
                self._quoted = not self._quoted
            elif self._quoted:
                continue
            elif head[index] == 0x0A:
                return index + 1
            elif index + 1 == len(head):
                self._at = index  # an LF may follow in the next piece
                return None
            else:
                return index + (2 if head[index + 1] == 0x0A else 1)
        self._at = len(head)
        return None
