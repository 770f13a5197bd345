"""/api/v1/leads/imports and /api/v1/leads/export: leads in and out as CSV files."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from litestar import Request, get, post
from litestar.params import Parameter
from litestar.response import Stream

from leadmail.adapters.http import segments as s
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    ImportEnvelope,
    ImportErrorPageEnvelope,
    ImportPageEnvelope,
)
from leadmail.adapters.http.import_schemas import (
    ImportErrorOut,
    ImportErrorPageOut,
    ImportOut,
    ImportPageOut,
)
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import ImportCursor, Limit
from leadmail.adapters.http.path_ids import ImportId
from leadmail.adapters.http.upload import file_of
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_imports import ImportMode, ImportNotFound
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from leadmail.domain.tags import tag_list
from leadmail.services.lead_export import LeadExport
from leadmail.services.lead_imports import ImportOptions, LeadImportService

AuthedRequest = Request[Principal, Any, Any]
# Litestar adds "; charset=utf-8" (the response's encoding) to a text/* type itself.
CSV = "text/csv"
IMPORT_TEXT = (
    "The file is the `file` part of a `multipart/form-data` body, or the body itself"
    " (`Content-Type: text/csv` as curl sends it, or any type but multipart; not declared"
    " below, where generated clients take the form); UTF-8 (a byte order mark is fine),"
    " CRLF or LF, `,` or `;` between fields. Columns by header, in any case: `email`"
    " (required), `name`, `source`, `note`, `phone`, `tags` (separated by `;` or `|`); any"
    " other column is a custom field whose key is the header lower-cased with spaces as `_`"
    " (values stay text; a blank cell is no value). An empty file, or a header that cannot"
    " be read (no `email` column, a column that makes no custom field key, the same column"
    " twice): 422 naming the column (or `body`), nothing stored. Answers 202 at once; the"
    " rows are read in the background, each failing on its own (listLeadImportErrors):"
    " follow the import with getLeadImport."
)


class LeadFileController(DiscoverableController):
    path = "/api/v1/leads"
    tags = ["leads"]
    imports: ClassVar[LeadImportService]
    export: ClassVar[LeadExport]
    upload_limit: ClassVar[int]  # bytes of an import's body (LEADMAIL_IMPORT_MAX_BYTES)

    imports_options = options_for("/imports", "GET", "POST")
    import_options = options_for("/imports/{import_id:str}", "GET")
    errors_options = options_for("/imports/{import_id:str}/errors", "GET")
    export_options = options_for("/export", "GET")

    @post(
        "/imports",
        status_code=202,
        summary="Import leads from a CSV file",
        description=IMPORT_TEXT,
        operation_id="importLeads",
        responses=error_responses(ValidationFailed, upload=True),
        request_max_body_size=None,  # upload_limit, checked as the body streams in
    )
    async def import_leads(
        self,
        request: AuthedRequest,
        mode: Annotated[
            Literal["upsert", "create"],
            Parameter(
                description=(
                    "`upsert`: a lead whose email is already in the account is updated (the"
                    " file's columns set, tags added, custom fields merged); `create`: it is"
                    " left as it is, and its row reported"
                )
            ),
        ] = "upsert",
        tags: Annotated[
            str | None, Parameter(description="Comma-separated tags added to every imported lead")
        ] = None,
    ) -> ImportEnvelope:
        added = [t for t in (tags or "").split(",") if t.strip()] if tags else []
        options = ImportOptions(mode=ImportMode(mode), tags=tag_list(added, "tags"))
        body = file_of(request, self.upload_limit)
        started = await self.imports.start(request.user.account_id, options, body)
        return ImportEnvelope.of("Import queued", ImportOut.of(started, self.imports.now()))

    @get(
        "/imports",
        summary="List your imports",
        description=(
            "Newest first, each as getLeadImport gives it (status, counts, `eta_seconds`)."
            " Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100."
        ),
        operation_id="listLeadImports",
        responses=error_responses(ValidationFailed),
    )
    async def list_imports(
        self,
        request: AuthedRequest,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: ImportCursor = None,
    ) -> ImportPageEnvelope:
        page = await self.imports.page(request.user.account_id, limit, cursor)
        now = self.imports.now()
        items = [ImportOut.of(found, now) for found in page.imports]
        return ImportPageEnvelope.of("Imports retrieved", ImportPageOut(items, page.next_cursor))

    @get(
        "/imports/{import_id:str}",
        summary="Get an import's progress",
        description="Status, counts, rows processed of `total`, and `eta_seconds` while running.",
        operation_id="getLeadImport",
        responses=error_responses(ImportNotFound),
    )
    async def get_import(self, request: AuthedRequest, import_id: ImportId) -> ImportEnvelope:
        found = await self.imports.get(request.user.account_id, import_id)
        return ImportEnvelope.of("Import retrieved", ImportOut.of(found, self.imports.now()))

    @get(
        "/imports/{import_id:str}/errors",
        summary="List an import's rows that were not imported",
        description=(
            "By row number (the header is row 1); cursor pagination: pass `next_cursor`"
            " back as `cursor`. `limit` is 1-100."
        ),
        operation_id="listLeadImportErrors",
        responses=error_responses(ImportNotFound, ValidationFailed),
    )
    async def list_errors(
        self,
        request: AuthedRequest,
        import_id: ImportId,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(
                pattern=r"^[0-9]{1,9}$",
                description="`next_cursor` of the previous page: the last row number shown",
            ),
        ] = None,
    ) -> ImportErrorPageEnvelope:
        after = int(cursor) if cursor is not None else 0
        rows, last = await self.imports.errors(request.user.account_id, import_id, after, limit)
        page = ImportErrorPageOut(
            items=[ImportErrorOut.of(row) for row in rows],
            next_cursor=None if last is None else str(last),
        )
        return ImportErrorPageEnvelope.of("Import errors retrieved", page)

    @get(
        "/export",
        summary="Export leads as CSV",
        description=(
            "A CSV file (UTF-8, CRLF) of the leads the filters select, newest first, sent as"
            " it is read: a header row `email,name,source,note,phone,tags` and one column per"
            " custom field key those leads have (sorted); tags separated by `;`. It imports"
            " back as the same leads. " + s.SEGMENT_TEXT
        ),
        operation_id="exportLeads",
        media_type=CSV,
        responses=error_responses(ValidationFailed),
        opt=s.SEGMENT_OPT,
    )
    async def export_leads(
        self,
        request: AuthedRequest,
        tag: s.Tag = None,
        any_tag: s.AnyTag = None,
        not_tag: s.NotTag = None,
        email: s.Email = None,
        source: s.Source = None,
        phone: s.Phone = None,
        created_after: s.CreatedAfter = None,
        created_before: s.CreatedBefore = None,
        q: s.Search = None,
    ) -> Stream:
        text = await self.export.open(request.user.account_id, s.segment_of(request))
        return Stream(
            text,
            media_type=CSV,
            headers={"Content-Disposition": 'attachment; filename="leads.csv"'},
        )
