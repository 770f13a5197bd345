"""Importing a CSV file of leads: upload it (mode and tags as the API takes them), watch
its progress live (rows, rows a second, time left), then read the rows it did not take."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.datastructures import UploadFile
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.pages import field_errors, page, see_other
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_imports import ImportMode, LeadImport, RowError
from leadmail.domain.tags import tag_list
from leadmail.services.lead_imports import ImportOptions, LeadImportService

AnyRequest = Request[Any, Any, Any]
IMPORTS = f"{DASHBOARD}/imports"
PAGE_SIZE = 20
ERRORS_SHOWN = 100
READ_SIZE = 64 * 1024


async def _chunks(upload: UploadFile) -> AsyncIterator[bytes]:
    while data := await upload.read(READ_SIZE):
        yield data


def progress_of(found: LeadImport, now: Any) -> dict[str, Any]:
    """What the progress page shows, and what its script reads again every second."""
    elapsed = None
    if found.started_at is not None:
        end = found.finished_at or now
        elapsed = max((end - found.started_at).total_seconds(), 0.001)
    rate = round(found.rows / elapsed) if elapsed and found.rows else 0
    eta = found.eta_seconds(now)
    return {
        "status": found.status.value,
        "rows": f"{found.rows:,}",
        "rows_value": found.rows,
        "total": f"{found.total:,}" if found.total is not None else "…",
        "total_value": found.total or 0,
        "rate": f"{rate:,} rows/s" if rate else "—",
        "eta": f"{eta} s" if eta is not None else "—",
        "created": f"{found.created:,}",
        "updated": f"{found.updated:,}",
        "skipped": f"{found.skipped:,}",
        "failed": f"{found.failed:,}",
        "error": found.error,
        "done": found.status.finished,
    }


class ImportPages(Controller):
    path = "/imports"
    include_in_schema = False
    imports: ClassVar[LeadImportService]

    @get("/")
    async def listing(self, request: AnyRequest, cursor: FromQuery[str | None] = None) -> Template:
        return await self._listing(request, cursor, {}, {})

    @get("/{import_id:str}")
    async def progress(self, request: AnyRequest, import_id: FromPath[str]) -> Template:
        account = session_of(request).user.account_id
        found = await self.imports.get(account, import_id)
        rows: list[RowError] = []
        last: int | None = None
        if found.status.finished:
            rows, last = await self.imports.errors(account, import_id, 0, ERRORS_SHOWN)
        return page(
            request,
            "import.html",
            "imports",
            "Import",
            lead_import=found,
            shown=progress_of(found, self.imports.now()),
            errors_found=rows,
            more_errors=last is not None,
        )

    @get("/{import_id:str}/progress")
    async def progress_json(self, request: AnyRequest, import_id: FromPath[str]) -> dict[str, Any]:
        found = await self.imports.get(session_of(request).user.account_id, import_id)
        return progress_of(found, self.imports.now())

    async def _listing(
        self,
        request: AnyRequest,
        cursor: str | None,
        errors: dict[str, str],
        kept: dict[str, str],
    ) -> Template:
        account = session_of(request).user.account_id
        found = await self.imports.page(account, PAGE_SIZE, cursor)
        now = self.imports.now()
        return page(
            request,
            "imports.html",
            "imports",
            "Import",
            status_code=422 if errors else 200,
            imports=[(i, progress_of(i, now)) for i in found.imports],
            next_cursor=found.next_cursor,
            errors=errors,
            values={"mode": "upsert", "tags": "", **kept},
            to_iso=to_iso,
        )


def import_pages(upload_limit: int) -> type[ImportPages]:
    """The pages, their upload taking files of up to ``upload_limit`` bytes
    (LEADMAIL_IMPORT_MAX_BYTES; a larger one: 413). The form is read whole (its CSRF token
    checked first), only ever for a signed-in user (security.SessionGuard)."""

    class Uploading(ImportPages):
        @post("/", request_max_body_size=upload_limit)
        async def upload(self, request: AnyRequest) -> Template | Redirect:
            account = session_of(request).user.account_id
            form = await request.form()
            mode, tags = str(form.get("mode", "upsert")), str(form.get("tags", ""))
            upload = form.get("file")
            kept = {"mode": mode, "tags": tags}
            try:
                if not isinstance(upload, UploadFile) or not upload.filename:
                    raise ValidationFailed.one("file", "is required: choose a CSV file")
                try:
                    chosen = ImportMode(mode)
                except ValueError as e:
                    raise ValidationFailed.one("mode", "must be `upsert` or `create`") from e
                added = [t for t in tags.split(",") if t.strip()]
                options = ImportOptions(mode=chosen, tags=tag_list(added, "tags"))
                started = await self.imports.start(account, options, _chunks(upload))
            except ValidationFailed as e:
                found = field_errors(e)
                # What is wrong with the file itself (a header without `email`, a column
                # that makes no field) is said by the file's input.
                said = {k: v for k, v in found.items() if k in ("mode", "tags")}
                about_file = [v for k, v in found.items() if k not in said]
                if about_file:
                    said["file"] = "; ".join(about_file)
                return await self._listing(request, None, said, kept)
            return see_other(f"{IMPORTS}/{started.import_id}")

    return Uploading
