"""Lead imports on the wire: an import's progress and its error rows."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from leadmail.adapters.http.schemas import ImportId
from leadmail.adapters.http.timestamps import to_iso, to_iso_or_none
from leadmail.domain.lead_imports import ImportStatus, LeadImport, RowError

ImportStatusOut = Literal["queued", "running", "done", "failed"]


class ImportOut(msgspec.Struct):
    id: ImportId
    status: ImportStatusOut
    mode: Literal["upsert", "create"]
    tags: list[str]
    rows: int  # data rows processed so far
    total: int | None  # data rows in the file, once counted
    created: int
    updated: int
    skipped: int
    failed: int
    eta_seconds: int | None
    error: str
    created_at: str
    started_at: str | None
    finished_at: str | None

    @classmethod
    def of(cls, lead_import: LeadImport, now: datetime) -> ImportOut:
        status = lead_import.status
        return cls(
            id=lead_import.import_id,
            # (an import being received has no id a client knows)
            status="queued" if status is ImportStatus.RECEIVING else status.value,  # type: ignore[arg-type]
            mode=lead_import.mode.value,
            tags=list(lead_import.tags),
            rows=lead_import.rows,
            total=lead_import.total,
            created=lead_import.created,
            updated=lead_import.updated,
            skipped=lead_import.skipped,
            failed=lead_import.failed,
            eta_seconds=lead_import.eta_seconds(now),
            error=lead_import.error,
            created_at=to_iso(lead_import.created_at),
            started_at=to_iso_or_none(lead_import.started_at),
            finished_at=to_iso_or_none(lead_import.finished_at),
        )


class ImportErrorOut(msgspec.Struct):
    row: int
    field: str
    message: str
    email: str  # the row's email cell (domain/lead_imports.RowError.email)

    @classmethod
    def of(cls, error: RowError) -> ImportErrorOut:
        return cls(row=error.row, field=error.field, message=error.message, email=error.email)


class ImportErrorPageOut(msgspec.Struct):
    items: list[ImportErrorOut]
    next_cursor: str | None


class ImportPageOut(msgspec.Struct):
    """A page of the account's imports, newest first; ``next_cursor`` null on the last."""

    items: list[ImportOut]
    next_cursor: str | None
