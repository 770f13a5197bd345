"""The document's word on the operations whose bodies are files, which Litestar cannot
infer: an import's request body (CSV as the body, or a form's ``file`` part) and the
export's answer (CSV text)."""

from __future__ import annotations

from litestar.openapi.spec import OpenAPIResponse, Operation, RequestBody, Schema
from litestar.openapi.spec.enums import OpenAPIType

from leadmail.adapters.http.examples import VerbatimExampleMedia
from leadmail.adapters.http.request_examples import IMPORT_CSV
from leadmail.adapters.http.samples import EXPORT_CSV

CSV = "text/csv"


def import_body() -> RequestBody:
    """An import's file: the body itself, or a multipart form's ``file`` part."""
    text = Schema(type=OpenAPIType.STRING, description="The CSV file, UTF-8")
    form = Schema(
        type=OpenAPIType.OBJECT,
        properties={"file": Schema(type=OpenAPIType.STRING, content_media_type=CSV)},
        required=["file"],
    )
    return RequestBody(
        required=True,
        content={
            CSV: VerbatimExampleMedia(schema=text, example=IMPORT_CSV),
            "multipart/form-data": VerbatimExampleMedia(schema=form, example={"file": IMPORT_CSV}),
        },
    )


def export_answer(headers: dict[str, object] | None) -> OpenAPIResponse:
    return OpenAPIResponse(
        description="The CSV file (UTF-8, CRLF), sent as it is read",
        headers=headers,  # type: ignore[arg-type]
        content={
            CSV: VerbatimExampleMedia(
                schema=Schema(type=OpenAPIType.STRING, content_media_type=CSV),
                example=EXPORT_CSV,
            )
        },
    )


def state_file_operation(operation: Operation) -> None:
    """The import's body and the export's answer, where Litestar has none or a vague one."""
    if operation.operation_id == "importLeads":
        operation.request_body = import_body()
    elif operation.operation_id == "exportLeads" and operation.responses:
        ok = operation.responses["200"]
        headers = ok.headers if isinstance(ok, OpenAPIResponse) else None
        operation.responses["200"] = export_answer(headers)  # type: ignore[arg-type]
