"""An import's rows read into leads and written a batch at a time, each batch with the
progress it makes, so that a runner that stops loses at most the batch under way."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime

from leadmail.domain.clock import Clock
from leadmail.domain.csv_records import LongRecord, Row
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import Columns, long_row
from leadmail.domain.lead_imports import (
    BATCH_ROWS,
    ImportBatch,
    ImportedRow,
    LeadImport,
    RowError,
    row_email,
)
from leadmail.domain.leads import Lead, new_lead_id
from leadmail.ports.lead_imports import LeadImportRepository

YIELD_EVERY = 50  # rows read between two turns given to the other tasks (requests)


class Lost(Exception):
    """Another runner has taken the import over: this one stops, writing nothing more."""


class Batcher:
    """Rows in, in file order (rows done before ``lead_import.rows`` are passed over:
    a resumed import); batches of BATCH_ROWS out."""

    def __init__(
        self,
        imports: LeadImportRepository,
        lead_import: LeadImport,
        runner: str,
        columns: Columns,
        last_row_of: dict[str, int],
        clock: Clock,
        progress: Callable[[LeadImport], None] | None = None,
    ) -> None:
        self._imports = imports
        self._import = lead_import
        self._runner = runner
        self._columns = columns
        self._last_row_of = last_row_of
        self._clock = clock
        self._progress = progress
        self._done = lead_import.rows  # data rows written (the position)
        self._seen = 0  # data rows read
        self._leads: list[ImportedRow] = []
        self._failed: list[RowError] = []
        self._skipped: list[RowError] = []
        self._stamp: datetime | None = None

    async def add(self, row: int, values: Row) -> None:
        """``row``: as a spreadsheet numbers it (the header is 1)."""
        self._seen += 1
        if self._seen <= self._import.rows:
            return
        if self._seen % YIELD_EVERY == 0:
            await asyncio.sleep(0)
        if isinstance(values, LongRecord):  # never read: too long for any lead
            error = long_row(values.chars)
            self._failed.append(RowError(row, error.field, error.message))
        elif any(values):  # a blank line is a row with nothing to import
            self._read(row, values)
        if self._seen - self._done >= BATCH_ROWS:
            await self._flush()

    def _read(self, row: int, values: Sequence[str]) -> None:
        try:
            fields = self._columns.fields_of(values, self._import.tags)
        except ValidationFailed as e:
            self._failed.append(_row_error(row, e, self._columns.email_of(values)))
            return
        if self._stamp is None:  # a batch's leads are stamped with one moment
            self._stamp = self._clock()
        lead = Lead.new(new_lead_id(), self._import.account_id, fields, self._stamp)
        last = self._last_row_of.get(lead.email_key, row)
        if last != row:
            message = f"row {last} has the same email, and was imported instead"
            self._skipped.append(RowError(row, "email", message, lead.email))
            return
        self._leads.append(ImportedRow(row, lead))

    async def close(self) -> None:
        if self._seen > self._done:
            await self._flush()

    async def _flush(self) -> None:
        batch = ImportBatch(
            import_id=self._import.import_id,
            account_id=self._import.account_id,
            runner=self._runner,
            mode=self._import.mode,
            columns=self._columns.texts,
            start=self._done,
            end=self._seen,
            leads=self._leads,
            failed=self._failed,
            skipped=self._skipped,
            now=self._stamp or self._clock(),
        )
        outcome = await self._imports.write(batch)
        if outcome is None:
            raise Lost()
        self._done = self._seen
        self._leads, self._failed, self._skipped, self._stamp = [], [], [], None
        self._import = dataclasses.replace(
            self._import,
            rows=self._done,
            created=self._import.created + outcome.created,
            updated=self._import.updated + outcome.updated,
            skipped=self._import.skipped + outcome.skipped,
            failed=self._import.failed + outcome.failed,
        )
        if self._progress is not None:
            self._progress(self._import)


def _row_error(row: int, failure: ValidationFailed, email: str) -> RowError:
    """One error row per row: its first broken cell, and the others named after it."""
    first, *others = failure.errors
    message = first.message
    if others:
        message += "; also " + "; ".join(f"`{e.field}` {e.message}" for e in others)
    return RowError(row, first.field, message, row_email(email))
