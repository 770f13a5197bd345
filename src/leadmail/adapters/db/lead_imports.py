"""Lead imports in SQL: the import, its file in chunks (bytea), its error rows. A batch's
write is in import_batches.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from leadmail.adapters.db import import_batches, sqlite_batches
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import LeadImportErrors, LeadImports
from leadmail.domain.lead_imports import (
    BatchOutcome,
    ImportBatch,
    ImportStatus,
    LeadImport,
    RowError,
)
from leadmail.domain.lead_listing import PageCursor
from leadmail.ports.lead_imports import LeadImportRepository

IMPORTS = Mapped(LeadImports, LeadImport, stored_as={"rows": "rows_done"})
ERRORS = Mapped(LeadImportErrors, RowError, stored_as={"row": "row_number"})
_ALL = ", ".join(f'"{column}"' for column in IMPORTS.columns)
_WAITING = f"('{ImportStatus.QUEUED}', '{ImportStatus.RUNNING}')"
# Postgres plans from statistics; after this many rows the leads table has changed enough
# that old ones mislead it (bench/README.md, "Tags and segments").
ANALYZE_AFTER_ROWS = 10_000

_INSERT = IMPORTS.insert
_ADD_CHUNK = IMPORTS.statement(
    'INSERT INTO "lead_import_chunks" ("import_id", "number", "data") VALUES (%s, %s, %s)'
)
_CHUNK = IMPORTS.statement(
    'SELECT "data" FROM "lead_import_chunks" WHERE "import_id" = %s AND "number" = %s'
)
_DELETE = [
    IMPORTS.statement(f'DELETE FROM "{table}" WHERE "import_id" = %s')
    for table in ("lead_import_errors", "lead_import_chunks", "lead_imports")
]
_QUEUE = IMPORTS.statement(
    f'UPDATE "lead_imports" SET "status" = \'{ImportStatus.QUEUED}\', "size" = %s,'
    f' "updated_at" = %s WHERE "import_id" = %s RETURNING {_ALL}'
)
_GET = IMPORTS.select("account_id", "import_id")
# Newest first, through lead_imports_listing (the migration's); uploads still arriving
# are not listed (nor found by _GET's callers).
_NEWEST = ' ORDER BY "created_at" DESC, "import_id" DESC LIMIT %s'
_LIST = IMPORTS.statement(
    f'SELECT {_ALL} FROM "lead_imports" WHERE "account_id" = %s'
    f" AND \"status\" <> '{ImportStatus.RECEIVING}'{_NEWEST}"
)
_LIST_AFTER = IMPORTS.statement(
    f'SELECT {_ALL} FROM "lead_imports" WHERE "account_id" = %s'
    f" AND \"status\" <> '{ImportStatus.RECEIVING}'"
    ' AND "created_at" <= %s AND ("created_at" < %s OR "import_id" < %s)'
    f"{_NEWEST}"
)
_CLAIM = IMPORTS.statement(
    f'UPDATE "lead_imports" SET "status" = \'{ImportStatus.RUNNING}\', "runner" = %s,'
    ' "attempts" = "attempts" + CASE WHEN "runner" = %s THEN 0 ELSE 1 END,'
    ' "started_at" = COALESCE("started_at", %s), "updated_at" = %s'
    f' WHERE "import_id" = %s AND "status" IN {_WAITING} RETURNING {_ALL}'
)
_COUNT = IMPORTS.statement(
    'UPDATE "lead_imports" SET "total" = %s, "updated_at" = %s'
    ' WHERE "import_id" = %s AND "runner" = %s RETURNING "import_id"'
)
_FINISH = IMPORTS.statement(
    'UPDATE "lead_imports" SET "status" = %s, "error" = %s, "finished_at" = %s,'
    ' "updated_at" = %s WHERE "import_id" = %s AND ("runner" = %s OR %s = \'\')'
    f' AND "status" IN {_WAITING}'
    f" RETURNING {_ALL}"
)
_FORGET_FILE = IMPORTS.statement('DELETE FROM "lead_import_chunks" WHERE "import_id" = %s')
_ERRORS = ERRORS.statement(
    'SELECT "row_number", "field", "message", "email" FROM "lead_import_errors" AS "e"'
    ' WHERE "import_id" = %s AND "row_number" > %s AND EXISTS (SELECT 1 FROM "lead_imports"'
    ' AS "i" WHERE "i"."import_id" = "e"."import_id" AND "i"."account_id" = %s)'
    ' ORDER BY "row_number" LIMIT %s'
)
_RECEIVING = (
    f'SELECT "import_id" FROM "lead_imports" WHERE "status" = \'{ImportStatus.RECEIVING}\''
    ' AND "created_at" < %s'
)
_FORGET = [
    IMPORTS.statement(f'DELETE FROM "{table}" WHERE "import_id" IN ({_RECEIVING})')
    for table in ("lead_import_chunks", "lead_imports")
]
_UNFINISHED = IMPORTS.statement(
    f'SELECT {_ALL} FROM "lead_imports" WHERE "status" IN {_WAITING} ORDER BY "created_at"'
)


class PiccoloLeadImportRepository(LeadImportRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(self, lead_import: LeadImport) -> None:
        await self._db.execute(_INSERT, *_INSERT.args(lead_import))

    async def add_chunk(self, import_id: str, number: int, data: bytes) -> None:
        await self._db.execute(_ADD_CHUNK, import_id, number, data)

    async def chunks(self, import_id: str) -> AsyncIterator[bytes]:
        number = 0
        while (row := await self._db.fetchrow(_CHUNK, import_id, number)) is not None:
            yield bytes(row["data"])
            number += 1

    async def delete(self, import_id: str) -> None:
        async with self._db.transaction():
            for statement in _DELETE:
                await self._db.execute(statement, import_id)

    async def queue(self, import_id: str, size: int, now: datetime) -> LeadImport | None:
        return self._one(await self._db.fetchrow(_QUEUE, size, now, import_id))

    async def newest(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[LeadImport]:
        if after is None:
            rows = await self._db.fetch(_LIST, account_id, limit + 1)
        else:
            at = after.created_at
            rows = await self._db.fetch(_LIST_AFTER, account_id, at, at, after.lead_id, limit + 1)
        return [IMPORTS.from_row(row) for row in rows]

    async def get(self, account_id: str, import_id: str) -> LeadImport | None:
        return self._one(await self._db.fetchrow(_GET, account_id, import_id))

    async def claim(self, import_id: str, runner: str, now: datetime) -> LeadImport | None:
        return self._one(await self._db.fetchrow(_CLAIM, runner, runner, now, now, import_id))

    async def count(self, import_id: str, runner: str, total: int, now: datetime) -> bool:
        return await self._db.fetchrow(_COUNT, total, now, import_id, runner) is not None

    async def write(self, batch: ImportBatch) -> BatchOutcome | None:
        if self._db.kind == "postgres":
            return await import_batches.write_postgres(self._db, batch)
        return await sqlite_batches.write_sqlite(self._db, batch)

    async def finish(
        self, import_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadImport | None:
        status = ImportStatus.DONE if error is None else ImportStatus.FAILED
        async with self._db.transaction():
            row = await self._db.fetchrow(
                _FINISH, str(status), error or "", now, now, import_id, runner, runner
            )
            finished = self._one(row)
            if finished is not None:  # its file is of no more use, and names people
                await self._db.execute(_FORGET_FILE, import_id)
        if (
            finished is not None
            and self._db.kind == "postgres"
            and finished.created >= ANALYZE_AFTER_ROWS
        ):
            await self._db.execute(IMPORTS.statement("ANALYZE leads"))
        return finished

    async def errors(
        self, account_id: str, import_id: str, after_row: int, limit: int
    ) -> list[RowError]:
        rows = await self._db.fetch(_ERRORS, import_id, after_row, account_id, limit)
        return [ERRORS.from_row(row) for row in rows]

    async def forget_uploads(self, before: datetime) -> int:
        async with self._db.transaction():
            found = await self._db.fetch(IMPORTS.statement(_RECEIVING), before)
            for statement in _FORGET:
                await self._db.execute(statement, before)
        return len(found)

    async def unfinished(self) -> list[LeadImport]:
        return [IMPORTS.from_row(row) for row in await self._db.fetch(_UNFINISHED)]

    @staticmethod
    def _one(row: object) -> LeadImport | None:
        return None if row is None else IMPORTS.from_row(row)  # type: ignore[arg-type]
