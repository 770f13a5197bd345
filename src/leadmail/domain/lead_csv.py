"""Leads as CSV: which column is which, a row read into a lead's fields, and a lead
written as a row. Import and export use the same columns, so an exported file imports
back into the same leads.

Columns are found by header name, case-insensitively: ``email`` (required), ``name``,
``source``, ``note``, ``phone``, ``tags`` (separated by ``;`` or ``|``); any other column
is a custom field, its key the header lower-cased with spaces as ``_``; a column with a
blank header is not read. CSV has no types:
a custom value is text as written (``01234`` stays ``01234``), and a blank cell is no
value.

A cell a spreadsheet would run as a formula is exported with a ``'`` before it (OWASP's
advice against CSV injection), and the import takes that ``'`` off again: ``neutralised``
and ``plain`` are each other's inverse, so an export imports back as it was, whatever the
text.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.custom_fields import MAX_FIELDS, MAX_FIELDS_BYTES, check_key
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.lead_imports import TEXT_COLUMNS
from leadmail.domain.leads import (
    MAX_NAME,
    MAX_NOTE,
    MAX_PHONE,
    MAX_SOURCE,
    Lead,
    LeadFields,
)
from leadmail.domain.tags import MAX_TAG, MAX_TAGS

LEAD_COLUMNS = ("email", "name", "source", "note", "phone", "tags")
TAG_SEPARATORS = re.compile(r"[;|]")
EXPORT_TAG_SEPARATOR = ";"
NO_EMAIL_COLUMN = "is missing from the header row: every file needs this column"
NEUTRALISER = "'"
# A cell that, past any ``'`` it starts with, a spreadsheet would read as a formula: a tab
# or CR first, or = + - @ first once leading whitespace is trimmed.
_FORMULA_PAST_QUOTES = re.compile(r"'*(?:[\t\r]|\s*[=+\-@])")


def neutralised(cell: str) -> str:
    """The cell as exported: with one more ``'`` before it when, past the ``'`` it starts
    with (none, usually), it would be read as a formula (``=1+2`` is ``'=1+2``, ``'=1+2``
    is ``''=1+2``)."""
    return NEUTRALISER + cell if _FORMULA_PAST_QUOTES.match(cell) else cell


def plain(cell: str) -> str:
    """The cell as imported: ``neutralised`` undone (one ``'`` taken off a cell that,
    past the ``'`` it starts with, would be read as a formula; any other cell as it is)."""
    if cell[:1] == NEUTRALISER and _FORMULA_PAST_QUOTES.match(cell):
        return cell[1:]
    return cell


# The longest header row a file may have, in bytes (its line end included).
MAX_HEADER_BYTES = 1 << 20
# The most text a row's cells can give a lead, whitespace aside: every field at its limit
# (a custom field's value is at most its fields' JSON).
LEAD_CHARS = (
    MAX_EMAIL_LENGTH
    + MAX_NAME
    + MAX_SOURCE
    + MAX_NOTE
    + MAX_PHONE
    + MAX_TAGS * (MAX_TAG + 1)
    + MAX_FIELDS_BYTES
)
# The longest row read, in characters (its line end included): a row needs no more
# separators than its header has characters, and no more than LEAD_CHARS of text, each
# character a doubled quote and each cell quoted. A longer row is a failed row, never held
# in memory nor parsed, so no file can make the reader slow or large.
MAX_ROW_CHARS = MAX_HEADER_BYTES + 2 * LEAD_CHARS + 2 * (len(LEAD_COLUMNS) + MAX_FIELDS) + 2


def long_row(chars: int) -> FieldError:
    """Why a row of ``chars`` characters, more than MAX_ROW_CHARS, is not imported."""
    return FieldError(
        "row",
        f"is {chars:,} characters long, more than a row may have ({MAX_ROW_CHARS:,}): not imported",
    )


@dataclass(frozen=True, slots=True)
class Columns:
    """Where each of a file's columns goes: a lead's own field, or a custom field."""

    width: int
    own: tuple[tuple[str, int], ...]  # (field of a lead, column index)
    custom: tuple[tuple[str, int], ...]  # (custom field key, column index)

    @classmethod
    def parse(cls, header: Sequence[str]) -> Columns:
        """From the header row. Raises ValidationFailed naming each column that cannot
        be read (by its header as written), or ``email`` when there is none."""
        errors: list[FieldError] = []
        seen: dict[str, str] = {}
        own: list[tuple[str, int]] = []
        custom: list[tuple[str, int]] = []
        for index, written in enumerate(header):
            name = written.strip().lower()
            if not name:  # a column without a header (a trailing separator): not read
                continue
            if name in LEAD_COLUMNS:
                key = name
            else:
                key = re.sub(r"\s", "_", name)
                problem = check_key(key)
                if problem is not None:
                    errors.append(
                        FieldError(
                            written,
                            f"(column {index + 1}) cannot be a custom field: {key!r} {problem}",
                        )
                    )
                    continue
            if key in seen:
                errors.append(
                    FieldError(written, f"(column {index + 1}) is the same column as {seen[key]!r}")
                )
                continue
            seen[key] = written
            (own if key in LEAD_COLUMNS else custom).append((key, index))
        if "email" not in seen:
            errors.append(FieldError("email", NO_EMAIL_COLUMN))
        if errors:
            raise ValidationFailed(errors)
        return cls(len(header), tuple(own), tuple(custom))

    @property
    def texts(self) -> frozenset[str]:
        """The lead's text fields the file gives (an update leaves the others alone)."""
        return frozenset(name for name, _ in self.own if name in TEXT_COLUMNS)

    def email_of(self, values: Sequence[str]) -> str:
        index = dict(self.own)["email"]
        return plain(values[index]) if index < len(values) else ""

    def fields_of(self, values: Sequence[str], tags: Sequence[str] = ()) -> LeadFields:
        """A row's lead, by the rules every lead obeys, with ``tags`` added. Raises
        ValidationFailed naming each broken cell by its column (``tags``, a custom key).
        Without a ``name`` column, a lead is named by its email's local part."""
        given = {name: plain(values[i]) if i < len(values) else "" for name, i in self.own}
        cell_tags = [t for t in TAG_SEPARATORS.split(given.pop("tags", "")) if t.strip()]
        fields = {key: plain(values[i]) for key, i in self.custom if i < len(values) and values[i]}
        if "name" not in given:
            given["name"] = given["email"].strip().partition("@")[0] or given["email"]
        try:
            return LeadFields.parse(**given, tags=[*cell_tags, *tags], fields=fields)
        except ValidationFailed as e:
            raise ValidationFailed([_by_column(error) for error in e.errors]) from e


def _by_column(error: FieldError) -> FieldError:
    """``tags[3]`` -> ``tags``, ``fields.city`` -> ``city``: a cell named as the file names it."""
    if error.field.startswith("tags["):
        return FieldError("tags", error.message)
    if error.field.startswith("fields."):
        return FieldError(error.field.removeprefix("fields."), error.message)
    return error


def export_header(keys: Iterable[str]) -> list[str]:
    return [*LEAD_COLUMNS, *sorted(keys)]


def export_row(lead: Lead, keys: Sequence[str]) -> list[str]:
    """``keys``: the custom field columns, in order. Every cell ``neutralised``."""
    fields = lead.fields
    cells = [
        lead.email,
        lead.name,
        lead.source,
        lead.note,
        lead.phone,
        EXPORT_TAG_SEPARATOR.join(lead.tags),
        *(_text(fields[key]) if key in fields else "" for key in keys),
    ]
    return [neutralised(cell) for cell in cells]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """Rows as CSV: comma-separated, CRLF, quoted only where needed."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()
