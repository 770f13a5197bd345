"""Where lead imports, their files and their failed rows are kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Protocol

from leadmail.domain.lead_imports import BatchOutcome, ImportBatch, LeadImport, RowError
from leadmail.domain.lead_listing import PageCursor


class LeadImportRepository(Protocol):
    """Every import of every account: a file stored in chunks (so any server can run the
    import), its progress, and the rows it did not take. Raises StorageUnavailable when the
    store cannot be reached."""

    async def create(self, lead_import: LeadImport) -> None:
        """Store a new import (status ``receiving``), with no file yet."""
        ...

    async def add_chunk(self, import_id: str, number: int, data: bytes) -> None:
        """Store chunk ``number`` (0, 1, ...) of the import's file."""
        ...

    def chunks(self, import_id: str) -> AsyncIterator[bytes]:
        """The file, chunk by chunk in order, read as it is iterated."""
        ...

    async def delete(self, import_id: str) -> None:
        """Forget the import, its file and its errors (an upload that failed)."""
        ...

    async def queue(self, import_id: str, size: int, now: datetime) -> LeadImport | None:
        """The file is stored (``size`` bytes): status ``queued``."""
        ...

    async def get(self, account_id: str, import_id: str) -> LeadImport | None: ...

    async def newest(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadImport]:
        """The account's imports whose file is stored (not ``receiving``), newest first
        (``created_at``, then id, descending), after the position ``after``: up to
        ``limit + 1`` of them."""
        ...

    async def claim(self, import_id: str, runner: str, now: datetime) -> LeadImport | None:
        """Make ``runner`` the import's runner and set it ``running``, unless it is
        finished or gone (None). A runner taking over from one that stopped continues
        from the last batch written; the one it replaced can write no more batches. A
        runner other than the last adds one to ``attempts``."""
        ...

    async def count(self, import_id: str, runner: str, total: int, now: datetime) -> bool:
        """Record the file's number of data rows; False if ``runner`` no longer runs it."""
        ...

    async def write(self, batch: ImportBatch) -> BatchOutcome | None:
        """Write one batch: its leads (created, or in mode upsert merged into the lead of
        the same email key; in mode create an existing one is left as it is, counted
        skipped with an error row), its error rows, and the import's counts and position
        (``batch.end``, ``attempts`` back to 0), all or nothing. None, with nothing
        written, if the import is no longer ``batch.runner``'s or not at ``batch.start``."""
        ...

    async def finish(
        self, import_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadImport | None:
        """``done`` (``error`` None) or ``failed`` with the reason; None if ``runner``
        (empty: anyone) no longer runs it. A finished import's file is deleted with it:
        nothing reads it again, and it names people (an erasure must not miss it)."""
        ...

    async def errors(
        self, account_id: str, import_id: str, after_row: int, limit: int
    ) -> list[RowError]:
        """Up to ``limit`` error rows of the import by row number, after ``after_row``."""
        ...

    async def forget_uploads(self, before: datetime) -> int:
        """Delete the imports still ``receiving`` that were created before ``before``
        (their upload's server stopped), with their chunks; how many."""
        ...

    async def unfinished(self) -> list[LeadImport]:
        """Imports ``queued`` or ``running``, of every account, oldest first."""
        ...
