"""Importing leads from CSV: the file taken in and stored (its header checked first), then
read and written in batches by a background job that any server can run, and resume."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.csv_records import LongRecord, Row, records
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_csv import MAX_ROW_CHARS, Columns, long_row
from leadmail.domain.lead_imports import (
    GAVE_UP,
    MAX_ATTEMPTS,
    ImportMode,
    ImportNotFound,
    ImportStatus,
    LeadImport,
    RowError,
    new_import_id,
)
from leadmail.domain.lead_listing import MAX_PAGE_SIZE, PageCursor
from leadmail.domain.tags import Tags
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.jobs import JobQueue
from leadmail.ports.lead_imports import LeadImportRepository
from leadmail.services.import_batches import YIELD_EVERY, Batcher, Lost
from leadmail.services.import_reading import LastRows, header_bytes, why
from leadmail.services.resuming import keep_resuming

IMPORT_JOB = "lead_import"
CHUNK_BYTES = 1 << 20  # a stored piece of the file
ABANDONED_AFTER = timedelta(hours=1)  # an import still receiving its file after that
RETRIES = 5  # of a run that lost the database, resuming from its last batch each time

log = logging.getLogger("leadmail.imports")
Progress = Callable[[LeadImport], None]


@dataclass(frozen=True, slots=True)
class ImportOptions:
    mode: ImportMode = ImportMode.UPSERT
    tags: Tags = ()  # added to every imported lead


@dataclass(frozen=True, slots=True)
class ImportPage:
    imports: list[LeadImport]
    next_cursor: str | None


class LeadImportService:
    """Start imports, show their progress and failed rows, and run them (the job)."""

    def __init__(
        self,
        imports: LeadImportRepository,
        jobs: JobQueue,
        clock: Clock = utc_now,
        retry_pause: float = 2.0,
    ) -> None:
        self._imports = imports
        self._jobs = jobs
        self._clock = clock
        self._retry_pause = retry_pause

    def now(self) -> datetime:
        """The service's clock (an import's ``eta_seconds`` is reckoned from it)."""
        return self._clock()

    async def start(
        self,
        account_id: str,
        options: ImportOptions,
        body: AsyncIterable[bytes],
        *,
        enqueue: bool = True,
    ) -> LeadImport:
        """Store the file and queue its import. Raises ValidationFailed (nothing stored)
        when the header row cannot be read; whatever ``body`` raises (too large, cut
        short) leaves nothing stored either. ``enqueue``: False when the caller runs it."""
        stream = aiter(body)
        head = await header_bytes(stream)
        now = self._clock()
        lead_import = LeadImport(
            new_import_id(),
            account_id,
            options.mode,
            options.tags,
            ImportStatus.RECEIVING,
            now,
            now,
        )
        await self._imports.create(lead_import)
        try:
            size = await self._store(lead_import.import_id, head, stream)
            queued = await self._imports.queue(lead_import.import_id, size, self._clock())
            assert queued is not None
        except BaseException:
            await asyncio.shield(self._imports.delete(lead_import.import_id))
            raise
        if enqueue:
            await self._jobs.enqueue(IMPORT_JOB, queued.import_id)
        return queued

    async def _store(self, import_id: str, head: bytes, rest: AsyncIterable[bytes]) -> int:
        buffered, number, size = bytearray(head), 0, len(head)
        async for data in rest:
            buffered += data
            size += len(data)
            while len(buffered) >= CHUNK_BYTES:
                await self._imports.add_chunk(import_id, number, bytes(buffered[:CHUNK_BYTES]))
                del buffered[:CHUNK_BYTES]
                number += 1
        if buffered:
            await self._imports.add_chunk(import_id, number, bytes(buffered))
        return size

    async def page(self, account_id: str, limit: int, cursor: str | None = None) -> ImportPage:
        """The account's imports, newest first, a page at a time; ValidationFailed for a
        limit outside 1-100 or a cursor not of a cursor's shape."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationFailed.one("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
        after = None if cursor is None else PageCursor.decode(cursor)
        found = await self._imports.newest(account_id, limit, after)
        if len(found) <= limit:
            return ImportPage(found, None)
        last = found[limit - 1]
        return ImportPage(found[:limit], PageCursor(last.created_at, last.import_id).encode())

    async def get(self, account_id: str, import_id: str) -> LeadImport:
        found = await self._imports.get(account_id, import_id)
        if found is None or found.status is ImportStatus.RECEIVING:
            raise ImportNotFound(import_id)
        return found

    async def errors(
        self, account_id: str, import_id: str, after_row: int, limit: int
    ) -> tuple[list[RowError], int | None]:
        """A page of the import's error rows, and the row to pass back for the next."""
        await self.get(account_id, import_id)
        rows = await self._imports.errors(account_id, import_id, after_row, limit + 1)
        if len(rows) <= limit:
            return rows, None
        return rows[:limit], rows[limit - 1].row

    async def resume_unfinished(self, idle_for: float = 0.0) -> int:
        """Queue again every import left queued or running (a server stopped mid-way)
        that has not moved for ``idle_for`` seconds. Returns how many."""
        now = self._clock()
        found = [
            lead_import
            for lead_import in await self._imports.unfinished()
            if (now - lead_import.updated_at).total_seconds() >= idle_for
        ]
        for lead_import in found:
            await self._jobs.enqueue(IMPORT_JOB, lead_import.import_id)
        return len(found)

    async def stop(self, import_id: str, reason: str) -> None:
        """Mark the import failed with ``reason`` (its runner was stopped for good: a
        command-line import interrupted); the rows it counted were written."""
        await self._imports.finish(import_id, "", self._clock(), error=reason)

    async def keep_resuming(self, idle_for: float = 120.0, every: float = 60.0) -> None:
        """Forever: queue again the imports that have not moved for ``idle_for`` seconds
        (a command-line import killed while the servers run). Cancel it to stop."""
        await keep_resuming(self.resume_unfinished, "imports", idle_for, every)

    async def forget_abandoned_uploads(self) -> int:
        """Delete the uploads a stopped server left half stored (older than an hour: no
        upload of at most 50 MB takes that long)."""
        return await self._imports.forget_uploads(self._clock() - ABANDONED_AFTER)

    async def run_job(self, import_id: str) -> None:
        """The job queue's handler (``run``, its result dropped)."""
        await self.run(import_id)

    async def run(self, import_id: str, progress: Progress | None = None) -> LeadImport | None:
        """The job: import the stored file from where it stands, to ``done`` (or
        ``failed`` with the reason and the rows written so far counted). None when
        another runner took it over, or it was already finished."""
        runner = secrets.token_hex(8)
        for attempt in range(1, RETRIES + 1):
            try:
                return await self._attempt(import_id, runner, progress)
            except Lost:
                return None
            except StorageUnavailable:
                if attempt == RETRIES:
                    raise
                log.warning("import_paused_storage_unavailable")
                await asyncio.sleep(self._retry_pause * attempt)
            except Exception as e:  # a bug: never left running
                await self._imports.finish(import_id, runner, self._clock(), error=why(e))
                raise
        return None  # (unreachable)

    async def _attempt(
        self, import_id: str, runner: str, progress: Progress | None
    ) -> LeadImport | None:
        lead_import = await self._imports.claim(import_id, runner, self._clock())
        if lead_import is None:
            return None
        if lead_import.attempts > MAX_ATTEMPTS:  # it keeps stopping the runs: no more
            return await self._imports.finish(import_id, runner, self._clock(), error=GAVE_UP)
        columns, last_rows = await self._first_pass(import_id)
        if not await self._imports.count(import_id, runner, last_rows.rows, self._clock()):
            raise Lost()
        lead_import = dataclasses.replace(lead_import, total=last_rows.rows)
        batcher = Batcher(
            self._imports, lead_import, runner, columns, last_rows.by_key, self._clock, progress
        )
        number = 0  # the row, as a spreadsheet numbers it
        async for rows in self._slices(import_id):
            for row in rows:
                number += 1
                if number > 1:  # the header (row 1) was read by the first pass
                    await batcher.add(number, row)
        await batcher.close()
        finished = await self._imports.finish(import_id, runner, self._clock())
        if finished is None:
            raise Lost()
        return finished

    async def _first_pass(self, import_id: str) -> tuple[Columns, LastRows]:
        """The columns, and which row of each email is its last (the one imported)."""
        columns: Columns | None = None
        found = LastRows()
        number = 0
        async for rows in self._slices(import_id):
            for row in rows:
                number += 1
                if isinstance(row, LongRecord):
                    if columns is None:
                        raise ValidationFailed([long_row(row.chars)])
                    found.see(number, None)
                elif columns is None:
                    columns = Columns.parse(row)
                else:
                    found.see(number, columns.email_of(row) if any(row) else None)
                if number % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # let requests in
        if columns is None:
            raise ValidationFailed.one("body", "has no header row")
        return columns, found

    async def _slices(self, import_id: str) -> AsyncIterator[list[Row]]:
        """The stored file's rows, a slice at a time, with a turn given to the other tasks
        (requests) after each: none holds the event loop for more than a few ms."""
        async for rows in records(self._imports.chunks(import_id), MAX_ROW_CHARS):
            yield rows
            await asyncio.sleep(0)
