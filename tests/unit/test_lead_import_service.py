"""The import job on the memory adapters: a runner stopped mid-way and the import resumed
(counts right, nothing written twice), a bug that fails it (never left running), and a
database that went away for a moment."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.lead_imports import (
    BATCH_ROWS,
    BatchOutcome,
    ImportBatch,
    ImportStatus,
    LeadImport,
)
from leadmail.ports.errors import StorageUnavailable
from leadmail.services.lead_imports import IMPORT_JOB, ImportOptions, LeadImportService

ACCOUNT = "acc_resume"
ROWS = 3 * BATCH_ROWS + 500


def big_file() -> bytes:
    lines = ["email,name,city"]
    for n in range(ROWS):
        row = n + 2  # as a spreadsheet numbers it
        email = "bad-address" if row == 10 else f"lead{n}@example.com"
        if row == ROWS + 1:  # the last row: the same email as row 20, which it replaces
            email = "LEAD18@example.com"
        lines.append(f"{email},Lead {n},City {n % 7}")
    return ("\n".join(lines) + "\n").encode()


async def body(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 4096):
        yield data[start : start + 4096]


class Stopping(MemoryLeadImportRepository):
    """Writes ``batches`` batches, then raises ``error`` at the next (a server stopping,
    the database failing, a bug)."""

    def __init__(self, leads: MemoryLeadRepository, batches: int, error: BaseException) -> None:
        super().__init__(leads)
        self.batches = batches
        self.error = error
        self.written = 0

    async def write(self, batch: ImportBatch) -> BatchOutcome | None:
        if self.written == self.batches:
            raise self.error
        self.written += 1
        return await super().write(batch)


async def started(imports: MemoryLeadImportRepository) -> tuple[LeadImportService, LeadImport]:
    jobs = InProcessJobQueue()
    service = LeadImportService(imports, jobs, retry_pause=0.0)
    jobs.handle(IMPORT_JOB, service.run_job)
    lead_import = await service.start(ACCOUNT, ImportOptions(), body(big_file()))
    return service, lead_import


async def test_a_runner_stopped_mid_way_is_resumed_from_its_last_batch() -> None:
    leads = MemoryLeadRepository()
    imports = Stopping(leads, batches=2, error=asyncio.CancelledError())
    service, lead_import = await started(imports)

    with pytest.raises(asyncio.CancelledError):  # the server stops during the third batch
        await service.run(lead_import.import_id)

    stopped = await service.get(ACCOUNT, lead_import.import_id)
    assert (stopped.status, stopped.rows) == (ImportStatus.RUNNING, 2 * BATCH_ROWS)
    assert len(leads.all_of(ACCOUNT)) == 2 * BATCH_ROWS - 2  # a bad row, a replaced one

    imports.batches = 100  # the next server: it resumes what was left running
    jobs = InProcessJobQueue()
    again = LeadImportService(imports, jobs)
    jobs.handle(IMPORT_JOB, again.run_job)
    assert await again.resume_unfinished() == 1
    await jobs.start()
    await jobs.idle()

    done = await again.get(ACCOUNT, lead_import.import_id)
    assert done.status is ImportStatus.DONE
    assert (done.rows, done.total) == (ROWS, ROWS)
    assert (done.created, done.updated, done.skipped, done.failed) == (ROWS - 2, 0, 1, 1)
    stored = leads.all_of(ACCOUNT)
    assert len(stored) == len({lead.email_key for lead in stored}) == ROWS - 2
    errors, _ = await again.errors(ACCOUNT, lead_import.import_id, 0, 10)
    assert [(e.row, e.field) for e in errors] == [(10, "email"), (20, "email")]
    assert {lead.email for lead in stored} >= {"LEAD18@example.com"}
    assert imports.written == 4


async def test_a_bug_fails_the_import_with_the_rows_written_counted() -> None:
    leads = MemoryLeadRepository()
    imports = Stopping(leads, batches=1, error=RuntimeError("a bug"))
    service, lead_import = await started(imports)

    with pytest.raises(RuntimeError):
        await service.run(lead_import.import_id)

    failed = await service.get(ACCOUNT, lead_import.import_id)
    assert failed.status is ImportStatus.FAILED
    assert failed.rows == BATCH_ROWS
    assert failed.created == len(leads.all_of(ACCOUNT)) == BATCH_ROWS - 2  # bad, replaced
    assert "rows counted were written" in failed.error
    assert await imports.unfinished() == []


async def test_a_database_gone_for_a_moment_pauses_then_resumes() -> None:
    leads = MemoryLeadRepository()
    imports = Stopping(leads, batches=1, error=StorageUnavailable())
    service, lead_import = await started(imports)

    async def back_soon() -> None:
        await asyncio.sleep(0)
        imports.batches = 100

    back = asyncio.create_task(back_soon())
    done = await service.run(lead_import.import_id)
    await back

    assert done is not None
    assert (done.status, done.created, done.rows) == (ImportStatus.DONE, ROWS - 2, ROWS)


async def test_an_import_whose_runner_died_is_queued_again_by_the_watch() -> None:
    """A command-line import killed while the servers run: no job exists for it; the
    servers' watch queues it again once it has not moved for two minutes."""
    leads = MemoryLeadRepository()
    imports = MemoryLeadImportRepository(leads)
    first = LeadImportService(imports, InProcessJobQueue())
    lead_import = await first.start(ACCOUNT, ImportOptions(), body(big_file()), enqueue=False)
    await imports.claim(lead_import.import_id, "killed-cli", lead_import.created_at)
    later = lead_import.created_at + timedelta(minutes=3)
    jobs = InProcessJobQueue()
    server = LeadImportService(imports, jobs, clock=lambda: later)
    jobs.handle(IMPORT_JOB, server.run_job)
    await jobs.start()

    watch = asyncio.create_task(server.keep_resuming(idle_for=120, every=0.01))
    try:
        for _ in range(500):
            await asyncio.sleep(0.01)
            found = await server.get(ACCOUNT, lead_import.import_id)
            if found.status is ImportStatus.DONE:
                break
    finally:
        watch.cancel()
        await jobs.stop()

    assert found.status is ImportStatus.DONE
    assert found.created == ROWS - 2
