from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime

from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.lead_imports import (
    BatchOutcome,
    ImportBatch,
    ImportStatus,
    LeadImport,
    RowError,
    plan,
)
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import imported


class MemoryLeadImportRepository:
    """Imports in dicts, writing into a MemoryLeadRepository's leads."""

    def __init__(
        self, leads: MemoryLeadRepository, events: MemoryLeadEventRepository | None = None
    ) -> None:
        """``events``: where its leads' imported events go (a store of its own if none)."""
        self._leads = leads
        self._events = events if events is not None else MemoryLeadEventRepository(leads)
        self._imports: dict[str, LeadImport] = {}
        self._chunks: dict[str, dict[int, bytes]] = {}
        self._errors: dict[str, list[RowError]] = {}

    async def create(self, lead_import: LeadImport) -> None:
        self._imports[lead_import.import_id] = lead_import
        self._chunks[lead_import.import_id] = {}
        self._errors[lead_import.import_id] = []

    async def add_chunk(self, import_id: str, number: int, data: bytes) -> None:
        self._chunks[import_id][number] = data

    async def chunks(self, import_id: str) -> AsyncIterator[bytes]:
        stored = self._chunks.get(import_id, {})
        for number in sorted(stored):
            yield stored[number]

    async def delete(self, import_id: str) -> None:
        self._imports.pop(import_id, None)
        self._chunks.pop(import_id, None)
        self._errors.pop(import_id, None)

    async def queue(self, import_id: str, size: int, now: datetime) -> LeadImport | None:
        return self._set(import_id, None, status=ImportStatus.QUEUED, size=size, updated_at=now)

    async def newest(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadImport]:
        found = sorted(
            (
                i
                for i in self._imports.values()
                if i.account_id == account_id and i.status is not ImportStatus.RECEIVING
            ),
            key=lambda i: (i.created_at, i.import_id),
            reverse=True,
        )
        if after is not None:
            position = (after.created_at, after.lead_id)
            found = [i for i in found if (i.created_at, i.import_id) < position]
        return found[: limit + 1]

    async def get(self, account_id: str, import_id: str) -> LeadImport | None:
        found = self._imports.get(import_id)
        return found if found is not None and found.account_id == account_id else None

    async def claim(self, import_id: str, runner: str, now: datetime) -> LeadImport | None:
        found = self._imports.get(import_id)
        if found is None or found.status.finished or found.status is ImportStatus.RECEIVING:
            return None
        return self._set(
            import_id,
            None,
            status=ImportStatus.RUNNING,
            runner=runner,
            attempts=found.attempts + (found.runner != runner),
            started_at=found.started_at or now,
            updated_at=now,
        )

    async def count(self, import_id: str, runner: str, total: int, now: datetime) -> bool:
        return self._set(import_id, runner, total=total, updated_at=now) is not None

    async def write(self, batch: ImportBatch) -> BatchOutcome | None:
        found = self._imports.get(batch.import_id)
        if found is None or found.runner != batch.runner or found.rows != batch.start:
            return None
        if found.status is not ImportStatus.RUNNING:
            return None
        existing = {}
        keys = {row.lead.email_key for row in batch.leads}
        for lead in self._leads.all_of(batch.account_id):
            if lead.email_key in keys:
                existing[lead.email_key] = lead
        planned = plan(batch, existing)
        for lead in [*planned.new, *planned.changed]:
            self._leads.put(lead)
        await self._events.add(
            [imported(lead, batch.import_id, True, batch.now) for lead in planned.new]
            + [imported(lead, batch.import_id, False, batch.now) for lead in planned.changed]
        )
        self._errors[batch.import_id].extend(planned.outcome.errors)
        outcome = planned.outcome
        self._set(
            batch.import_id,
            batch.runner,
            rows=batch.end,
            attempts=0,
            created=found.created + outcome.created,
            updated=found.updated + outcome.updated,
            skipped=found.skipped + outcome.skipped,
            failed=found.failed + outcome.failed,
            updated_at=batch.now,
        )
        return outcome

    async def finish(
        self, import_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadImport | None:
        status = ImportStatus.DONE if error is None else ImportStatus.FAILED
        found = self._imports.get(import_id)
        if found is None or found.status.finished:
            return None
        self._chunks.pop(import_id, None)  # its file is of no more use, and names people
        return self._set(
            import_id, runner or None, status=status, error=error or "", finished_at=now,
            updated_at=now,
        )  # fmt: skip

    async def errors(
        self, account_id: str, import_id: str, after_row: int, limit: int
    ) -> list[RowError]:
        if await self.get(account_id, import_id) is None:
            return []
        return [e for e in self._errors[import_id] if e.row > after_row][:limit]

    async def forget_uploads(self, before: datetime) -> int:
        abandoned = [
            i.import_id
            for i in self._imports.values()
            if i.status is ImportStatus.RECEIVING and i.created_at < before
        ]
        for import_id in abandoned:
            await self.delete(import_id)
        return len(abandoned)

    async def unfinished(self) -> list[LeadImport]:
        waiting = (ImportStatus.QUEUED, ImportStatus.RUNNING)
        found = [i for i in self._imports.values() if i.status in waiting]
        return sorted(found, key=lambda i: i.created_at)

    def _set(self, import_id: str, owner: str | None, **changes: object) -> LeadImport | None:
        """Change the import, if it exists and (``owner`` given) is that runner's."""
        found = self._imports.get(import_id)
        if found is None or (owner is not None and found.runner != owner):
            return None
        changed = replace(found, **changes)  # type: ignore[arg-type]
        self._imports[import_id] = changed
        return changed
