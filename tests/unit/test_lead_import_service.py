"""The import job on the memory adapters: a runner stopped mid-way and the import resumed
(counts right, nothing written twice), a bug that fails it (never left running), a
database that went away for a moment, rows too long for any lead, the turns it leaves
other tasks, and an import whose runs keep dying failed instead of run forever."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.csv_records import SLICE_BYTES
from leadmail.domain.lead_csv import MAX_ROW_CHARS, long_row
from leadmail.domain.lead_imports import (
    BATCH_ROWS,
    GAVE_UP,
    MAX_ATTEMPTS,
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


async def test_a_row_longer_than_any_lead_is_one_failed_row_and_the_others_are_imported() -> None:
    """Its quotes are still counted: a long quoted note over many lines is one row, and the
    rows after it keep their numbers."""
    long_plain = "long@example.com,Long," + "x" * MAX_ROW_CHARS
    long_quoted = (
        'quoted@example.com,Quoted,"' + 'line ""one"", two\n' * (MAX_ROW_CHARS // 16) + '"'
    )
    lines = [
        "email,name,note",
        "ada@example.com,Ada,",  # row 2
        long_plain,  # 3
        long_quoted,  # 4
        "not-an-address,Bad,",  # 5
        "grace@example.com,Grace,",  # 6
    ]
    leads = MemoryLeadRepository()
    service = LeadImportService(MemoryLeadImportRepository(leads), InProcessJobQueue())
    data = ("\r\n".join(lines) + "\r\n").encode()
    lead_import = await service.start(ACCOUNT, ImportOptions(), body(data), enqueue=False)

    done = await service.run(lead_import.import_id)

    assert done is not None
    assert (done.status, done.rows, done.total) == (ImportStatus.DONE, 5, 5)
    assert (done.created, done.failed) == (2, 3)
    assert {lead.email for lead in leads.all_of(ACCOUNT)} == {
        "ada@example.com",
        "grace@example.com",
    }
    errors, _ = await service.errors(ACCOUNT, lead_import.import_id, 0, 10)
    assert [(e.row, e.field) for e in errors] == [(3, "row"), (4, "row"), (5, "email")]
    assert errors[0].message == long_row(len(long_plain) + 2).message
    assert f"{MAX_ROW_CHARS:,}" in errors[1].message


async def test_a_long_line_leaves_other_tasks_a_turn_at_every_slice() -> None:
    """The job gives the event loop back between two slices of the file (and the memory
    store's file never waits on anything): a task beside it runs all along."""
    size = 8 << 20
    data = b"email,name\n" + b"x" * size + b"\nada@example.com,Ada\n"
    service = LeadImportService(
        MemoryLeadImportRepository(MemoryLeadRepository()), InProcessJobQueue()
    )
    lead_import = await service.start(ACCOUNT, ImportOptions(), body(data), enqueue=False)
    turns = 0

    async def beside() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(beside())
    try:
        done = await service.run(lead_import.import_id)
    finally:
        ticking.cancel()

    assert done is not None
    assert (done.status, done.created, done.failed) == (ImportStatus.DONE, 1, 1)
    assert turns >= 2 * size // SLICE_BYTES  # both passes over the file


async def test_an_import_whose_runs_keep_dying_is_failed_instead_of_run_again() -> None:
    leads = MemoryLeadRepository()
    imports = MemoryLeadImportRepository(leads)
    service = LeadImportService(imports, InProcessJobQueue())
    lead_import = await service.start(ACCOUNT, ImportOptions(), body(big_file()), enqueue=False)
    for n in range(MAX_ATTEMPTS):  # runners that died before their first batch
        await imports.claim(lead_import.import_id, f"died-{n}", lead_import.created_at)

    failed = await service.run(lead_import.import_id)

    assert failed is not None
    assert (failed.status, failed.error, failed.rows) == (ImportStatus.FAILED, GAVE_UP, 0)
    assert leads.all_of(ACCOUNT) == []
    assert await imports.unfinished() == []
    assert await service.resume_unfinished() == 0


async def test_a_run_that_wrote_a_batch_starts_the_count_of_attempts_again() -> None:
    leads = MemoryLeadRepository()
    imports = Stopping(leads, batches=1, error=asyncio.CancelledError())
    service, lead_import = await started(imports)
    for n in range(MAX_ATTEMPTS - 1):
        await imports.claim(lead_import.import_id, f"died-{n}", lead_import.created_at)
    with pytest.raises(asyncio.CancelledError):  # the last attempt, but it writes a batch
        await service.run(lead_import.import_id)
    for n in range(MAX_ATTEMPTS - 1):
        await imports.claim(lead_import.import_id, f"died-again-{n}", lead_import.created_at)

    imports.batches = 100
    done = await service.run(lead_import.import_id)

    assert done is not None
    assert (done.status, done.rows, done.created) == (ImportStatus.DONE, ROWS, ROWS - 2)
