"""The LeadImportRepository contract, on memory, SQLite and Postgres: the stored file, a
batch's writes (create, merge, create mode, limits) with its progress all or nothing, the
runner's claim, error rows by page; and LeadRepository.field_keys."""

from __future__ import annotations

from collections.abc import Sequence

from leadmail.domain.lead_imports import (
    EXISTS,
    TOO_MANY_TAGS,
    ImportBatch,
    ImportedRow,
    ImportMode,
    ImportStatus,
    LeadImport,
    RowError,
    new_import_id,
)
from leadmail.domain.lead_listing import LeadQuery, PageCursor
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from tests.contract.support import T0, Storage, a_lead, moment


async def started(storage: Storage, mode: ImportMode = ImportMode.UPSERT) -> LeadImport:
    """A new import of a new account, stored and claimed by runner "r1"."""
    account_id = await storage.new_account()
    new = LeadImport(new_import_id(), account_id, mode, (), ImportStatus.RECEIVING, T0, T0)
    await storage.imports.create(new)
    await storage.imports.add_chunk(new.import_id, 0, b"email\n")
    assert await storage.imports.queue(new.import_id, 6, T0) is not None
    claimed = await storage.imports.claim(new.import_id, "r1", moment(1))
    assert claimed is not None
    return claimed


def batch(
    lead_import: LeadImport,
    leads: Sequence[Lead],
    *,
    start: int = 0,
    runner: str = "r1",
    failed: Sequence[RowError] = (),
    skipped: Sequence[RowError] = (),
    columns: frozenset[str] = frozenset({"name", "source", "note", "phone"}),
) -> ImportBatch:
    rows = [ImportedRow(start + 2 + i, lead) for i, lead in enumerate(leads)]
    return ImportBatch(
        import_id=lead_import.import_id,
        account_id=lead_import.account_id,
        runner=runner,
        mode=lead_import.mode,
        columns=columns,
        start=start,
        end=start + len(leads) + len(failed) + len(skipped),
        leads=rows,
        failed=failed,
        skipped=skipped,
        now=moment(5),
    )


async def all_leads(storage: Storage, account_id: str) -> list[Lead]:
    return await storage.leads.list(account_id, LeadQuery(limit=1000))


async def test_the_file_is_kept_in_numbered_chunks_read_in_order(storage: Storage) -> None:
    account_id = await storage.new_account()
    new = LeadImport(
        new_import_id(), account_id, ImportMode.UPSERT, ("x",), ImportStatus.RECEIVING, T0, T0
    )
    await storage.imports.create(new)
    for number, data in enumerate([b"email\n", b"\x00\xff binary too", b"last"]):
        await storage.imports.add_chunk(new.import_id, number, data)

    assert [c async for c in storage.imports.chunks(new.import_id)] == [
        b"email\n",
        b"\x00\xff binary too",
        b"last",
    ]
    queued = await storage.imports.queue(new.import_id, 27, moment(1))
    assert queued is not None
    assert (queued.status, queued.size, queued.tags) == (ImportStatus.QUEUED, 27, ("x",))
    assert await storage.imports.get(account_id, new.import_id) == queued
    assert await storage.imports.get(await storage.new_account(), new.import_id) is None

    await storage.imports.delete(new.import_id)
    assert await storage.imports.get(account_id, new.import_id) is None
    assert [c async for c in storage.imports.chunks(new.import_id)] == []


async def test_a_batch_creates_and_merges_and_counts_with_its_position(storage: Storage) -> None:
    lead_import = await started(storage)
    account_id = lead_import.account_id
    stored = a_lead(
        account_id, email="ada@example.com", tags=("old",), fields={"city": "Leeds", "age": 34}
    )
    await storage.leads.add(stored)
    incoming = [
        a_lead(
            account_id,
            email="ADA@example.com",
            name="Ada L",
            tags=("new",),
            fields={"city": "York"},
            created_at=moment(5),
        ),
        a_lead(account_id, email="grace@example.com", name="Grace", created_at=moment(5)),
    ]
    bad = [RowError(4, "email", "is not valid", "not valid@")]

    outcome = await storage.imports.write(batch(lead_import, incoming, failed=bad))

    assert outcome is not None
    assert (outcome.created, outcome.updated, outcome.skipped, outcome.failed) == (1, 1, 0, 1)
    leads = {lead.email_key: lead for lead in await all_leads(storage, account_id)}
    ada = leads["ada@example.com"]
    assert ada.lead_id == stored.lead_id
    assert (ada.email, ada.name, ada.tags) == ("ADA@example.com", "Ada L", ("new", "old"))
    assert ada.fields == {"city": "York", "age": 34}
    assert ada.created_at == stored.created_at
    assert ada.updated_at == moment(5)
    assert leads["grace@example.com"].name == "Grace"
    after = await storage.imports.get(account_id, lead_import.import_id)
    assert after is not None
    assert (after.rows, after.created, after.updated, after.failed) == (3, 1, 1, 1)
    assert await storage.imports.errors(account_id, lead_import.import_id, 0, 10) == bad


async def test_columns_the_file_has_not_are_left_as_they_are(storage: Storage) -> None:
    lead_import = await started(storage)
    stored = a_lead(lead_import.account_id, email="ada@example.com", source="fair", note="n")
    await storage.leads.add(stored)
    incoming = a_lead(lead_import.account_id, email="ada@example.com", name="New", source="")

    await storage.imports.write(batch(lead_import, [incoming], columns=frozenset({"name"})))

    [lead] = await all_leads(storage, lead_import.account_id)
    assert (lead.name, lead.source, lead.note) == ("New", "fair", "n")


async def test_mode_create_leaves_an_existing_lead_and_reports_its_row(storage: Storage) -> None:
    lead_import = await started(storage, ImportMode.CREATE)
    stored = a_lead(lead_import.account_id, email="ada@example.com", name="Kept")
    await storage.leads.add(stored)
    incoming = [
        a_lead(lead_import.account_id, email="ada@example.com", name="Not written"),
        a_lead(lead_import.account_id, email="new@example.com"),
    ]
    dup = [RowError(4, "email", "row 9 has the same email", "new@example.com")]

    outcome = await storage.imports.write(batch(lead_import, incoming, skipped=dup))

    assert outcome is not None
    assert (outcome.created, outcome.updated, outcome.skipped, outcome.failed) == (1, 0, 2, 0)
    names = {lead.email: lead.name for lead in await all_leads(storage, lead_import.account_id)}
    assert names["ada@example.com"] == "Kept"
    errors = await storage.imports.errors(lead_import.account_id, lead_import.import_id, 0, 10)
    # Each row names its email: the lead's as the file wrote it, for a row refused here.
    assert errors == [RowError(2, "email", EXISTS, "ada@example.com"), *dup]


async def test_a_merge_past_the_tag_limit_is_a_failed_row(storage: Storage) -> None:
    lead_import = await started(storage)
    many = tuple(f"t{n:02d}" for n in range(45))
    await storage.leads.add(a_lead(lead_import.account_id, email="ada@example.com", tags=many))
    more = tuple(f"u{n:02d}" for n in range(10))
    incoming = a_lead(lead_import.account_id, email="ada@example.com", tags=more, name="No")

    outcome = await storage.imports.write(batch(lead_import, [incoming]))

    assert outcome is not None
    assert (outcome.updated, outcome.failed) == (0, 1)
    [lead] = await all_leads(storage, lead_import.account_id)
    assert (lead.tags, lead.name) == (many, "Ada Lovelace")
    errors = await storage.imports.errors(lead_import.account_id, lead_import.import_id, 0, 10)
    assert errors == [RowError(2, "tags", TOO_MANY_TAGS, "ada@example.com")]


async def test_a_batch_of_another_runner_or_position_writes_nothing(storage: Storage) -> None:
    lead_import = await started(storage)
    lead = a_lead(lead_import.account_id)

    assert await storage.imports.write(batch(lead_import, [lead], runner="r2")) is None
    assert await storage.imports.write(batch(lead_import, [lead], start=5)) is None
    # Taken over: the new runner goes on from the position; the old one can write no more.
    taken = await storage.imports.claim(lead_import.import_id, "r2", moment(9))
    assert taken is not None
    assert taken.status is ImportStatus.RUNNING
    assert taken.started_at == lead_import.started_at == moment(1)  # its first start
    assert await storage.imports.write(batch(lead_import, [lead])) is None
    assert await all_leads(storage, lead_import.account_id) == []
    assert await storage.imports.write(batch(lead_import, [lead], runner="r2")) is not None
    assert not await storage.imports.count(lead_import.import_id, "r1", 1, moment(10))
    assert await storage.imports.count(lead_import.import_id, "r2", 1, moment(10))


async def test_each_new_runner_counts_an_attempt_until_a_batch_is_written(
    storage: Storage,
) -> None:
    lead_import = await started(storage)
    assert lead_import.attempts == 1
    again = await storage.imports.claim(lead_import.import_id, "r1", moment(2))
    assert again is not None
    assert again.attempts == 1
    taken = await storage.imports.claim(lead_import.import_id, "r2", moment(3))
    assert taken is not None
    assert taken.attempts == 2
    taken = await storage.imports.claim(lead_import.import_id, "r3", moment(4))
    assert taken is not None
    assert taken.attempts == 3

    lead = a_lead(lead_import.account_id)
    assert await storage.imports.write(batch(lead_import, [lead], runner="r3")) is not None

    found = await storage.imports.get(lead_import.account_id, lead_import.import_id)
    assert found is not None
    assert found.attempts == 0
    taken = await storage.imports.claim(lead_import.import_id, "r4", moment(6))
    assert taken is not None
    assert taken.attempts == 1


async def test_finished_imports_are_neither_claimed_nor_unfinished(storage: Storage) -> None:
    lead_import = await started(storage)
    assert lead_import.import_id in {i.import_id for i in await storage.imports.unfinished()}
    assert await storage.imports.finish(lead_import.import_id, "other", moment(3)) is None

    done = await storage.imports.finish(lead_import.import_id, "r1", moment(3))

    assert done is not None
    assert (done.status, done.finished_at) == (ImportStatus.DONE, moment(3))
    assert await storage.imports.claim(lead_import.import_id, "r3", moment(4)) is None
    assert await storage.imports.finish(lead_import.import_id, "", moment(4), "no") is None
    assert lead_import.import_id not in {i.import_id for i in await storage.imports.unfinished()}


async def test_a_finished_imports_file_is_deleted_and_a_running_ones_kept(
    storage: Storage,
) -> None:
    done, running = await started(storage), await started(storage)
    for lead_import in (done, running):
        await storage.imports.add_chunk(lead_import.import_id, 1, b"ada@example.com\n")

    assert await storage.imports.finish(done.import_id, "r1", moment(3)) is not None

    # The file names people and nothing reads it again: an erasure must not miss it.
    assert [c async for c in storage.imports.chunks(done.import_id)] == []
    assert [c async for c in storage.imports.chunks(running.import_id)] == [
        b"email\n",
        b"ada@example.com\n",
    ]
    assert await storage.imports.get(done.account_id, done.import_id) is not None


async def test_uploads_left_half_stored_are_forgotten_after_a_while(storage: Storage) -> None:
    account_id = await storage.new_account()
    old = LeadImport(
        new_import_id(), account_id, ImportMode.UPSERT, (), ImportStatus.RECEIVING, T0, T0
    )
    recent = LeadImport(
        new_import_id(), account_id, ImportMode.UPSERT, (), ImportStatus.RECEIVING, moment(9), T0
    )
    for lead_import in (old, recent):
        await storage.imports.create(lead_import)
        await storage.imports.add_chunk(lead_import.import_id, 0, b"email\n")
    queued = await started(storage)  # made at T0 too, but its file was stored

    assert await storage.imports.forget_uploads(moment(5)) == 1

    assert await storage.imports.get(account_id, old.import_id) is None
    assert [c async for c in storage.imports.chunks(old.import_id)] == []
    assert await storage.imports.get(account_id, recent.import_id) is not None
    assert await storage.imports.get(queued.account_id, queued.import_id) is not None


async def test_error_rows_come_by_row_number_a_page_at_a_time(storage: Storage) -> None:
    lead_import = await started(storage)
    failed = [RowError(row, "email", f"bad {row}") for row in range(2, 9)]
    await storage.imports.write(batch(lead_import, [], failed=failed))
    account_id = lead_import.account_id

    first = await storage.imports.errors(account_id, lead_import.import_id, 0, 3)
    rest = await storage.imports.errors(account_id, lead_import.import_id, first[-1].row, 10)

    assert [*first, *rest] == failed
    assert len(first) == 3
    other = await storage.new_account()
    assert await storage.imports.errors(other, lead_import.import_id, 0, 10) == []


async def test_field_keys_of_a_segment(storage: Storage) -> None:
    account_id = await storage.new_account()
    await storage.leads.add(a_lead(account_id, tags=("a",), fields={"city": "Leeds", "b_1": 1}))
    await storage.leads.add(a_lead(account_id, tags=("b",), fields={"age": 3, "b1": True}))
    await storage.leads.add(a_lead(await storage.new_account(), fields={"other": "x"}))

    assert await storage.leads.field_keys(account_id, LeadFilter()) == ["age", "b1", "b_1", "city"]
    assert await storage.leads.field_keys(account_id, LeadFilter(all_tags=("a",))) == [
        "b_1",
        "city",
    ]


async def test_an_accounts_imports_come_newest_first_by_pages_without_uploads(
    storage: Storage,
) -> None:
    account_id, other = await storage.new_account(), await storage.new_account()
    queued: list[LeadImport] = []
    for n in (1, 2, 2, 3):  # two at one moment: the id breaks the tie
        new = LeadImport(
            new_import_id(), account_id, ImportMode.UPSERT, (), ImportStatus.RECEIVING,
            moment(n), moment(n),
        )  # fmt: skip
        await storage.imports.create(new)
        stored = await storage.imports.queue(new.import_id, 6, moment(n))
        assert stored is not None
        queued.append(stored)
    receiving = LeadImport(
        new_import_id(), account_id, ImportMode.UPSERT, (), ImportStatus.RECEIVING,
        moment(4), moment(4),
    )  # fmt: skip
    await storage.imports.create(receiving)  # its file still arriving: not listed
    newest = sorted(queued, key=lambda i: (i.created_at, i.import_id), reverse=True)

    first = await storage.imports.newest(account_id, 2)
    rest = await storage.imports.newest(
        account_id, 2, PageCursor(first[1].created_at, first[1].import_id)
    )

    assert [i.import_id for i in first] == [i.import_id for i in newest[:3]]  # limit + 1
    assert [i.import_id for i in rest] == [i.import_id for i in newest[2:]]
    assert first[0] == newest[0]  # every field read back
    assert await storage.imports.newest(other, 10) == []
