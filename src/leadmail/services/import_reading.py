"""An import's file as the job reads it: the header checked as the upload arrives, and
which row of each email is the one imported."""

from __future__ import annotations

import csv
from collections.abc import AsyncIterable, Sequence

from leadmail.domain.addresses import email_key
from leadmail.domain.csv_records import NotText, sniff_delimiter
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import Columns
from leadmail.domain.leads import RULES

MAX_HEADER_BYTES = 1 << 20


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
    iterator = aiter(stream)
    while True:
        end = header_end(head)
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


def header_end(head: Sequence[int]) -> int | None:
    """Where the first record ends (after its line break: CRLF, CR or LF), if it has."""
    quoted = False
    for index, byte in enumerate(head):
        if byte == 0x22:
            quoted = not quoted
        elif byte == 0x0A and not quoted:
            return index + 1
        elif byte == 0x0D and not quoted:
            if index + 1 == len(head):
                return None  # an LF may follow in the next piece
            return index + (2 if head[index + 1] == 0x0A else 1)
    return None
