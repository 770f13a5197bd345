"""The document's word on the operations whose bodies are files, which Litestar cannot
infer: an import's request body (a form's ``file`` part) and the export's answer (CSV
text)."""

from __future__ import annotations

import re

from litestar.openapi.spec import OpenAPIResponse, Operation, RequestBody, Schema
from litestar.openapi.spec.enums import OpenAPIType

from leadmail.adapters.http.examples import VerbatimExampleMedia
from leadmail.adapters.http.request_examples import IMPORT_CSV
from leadmail.adapters.http.samples import EXPORT_CSV
from leadmail.domain.csv_records import DELIMITERS
from leadmail.domain.custom_fields import FIELD_KEY

CSV = "text/csv"
FORM = "multipart/form-data"
FILE_TEXT = (
    "The CSV file, UTF-8, whose header row names its columns; an `email` column among them."
    " The pattern states the header row as the export writes it: column names are custom"
    " field keys (`email`, `name`, `city`; none twice), `,` or `;` between them, spaces"
    " around them, blank columns. The server reads more (see the operation's description):"
    " names in any case, spaces inside a name as `_`, quoted names."
)


def header_pattern() -> str:
    """A file whose header row the import takes (services/import_reading.py), as a JSON
    Schema pattern: the header as the export writes it (a name is a custom field key, the
    lead's own columns among them), an ``email`` column, no column twice; any rows after.

    Narrower than the server, which also reads names in any case and with spaces inside:
    "Email" and "email" are one column, which no pattern can tell apart."""
    key = FIELD_KEY.pattern.removeprefix("^").removesuffix("$")
    space = "[ \\t]*"
    cell = f"{space}(?:{key}{space})?"
    rows = "|".join(
        f"(?:{cell}{re.escape(d)})*{space}email{space}(?:{re.escape(d)}{cell})*" for d in DELIMITERS
    )
    delimiter = "[" + "".join(re.escape(d) for d in DELIMITERS) + "]"
    line = f"[^\\r\\n]*{delimiter}"
    # The same name in two cells of the header row (a back-reference to the first).
    twice = (
        f"\\ufeff?(?:{line})?{space}([a-z][a-z0-9_]*){space}{delimiter}(?:{line})?"
        f"{space}\\1{space}(?:{delimiter}|\\r|\\n|$)"
    )
    return f"^(?!{twice})\\ufeff?(?:{rows})(?:(?:\\r\\n|\\r|\\n)[\\s\\S]*)?$"


def file_schema() -> Schema:
    return Schema(
        type=OpenAPIType.STRING,
        min_length=1,
        pattern=header_pattern(),
        content_media_type=CSV,
        description=FILE_TEXT,
    )


def import_body() -> RequestBody:
    """An import's file: a multipart form's ``file`` part, as text.

    The server also takes the file as the body itself (``text/csv``, as curl sends it: any
    type but multipart), which the operation's description says in words and does not
    declare: openapi-python-client warns for every ``text/csv`` body ("Unsupported content
    type"), and as ``application/octet-stream`` a text body generates broken code (it
    needs ``format: binary``: any bytes, which is not what the server takes)."""
    form = Schema(type=OpenAPIType.OBJECT, properties={"file": file_schema()}, required=["file"])
    return RequestBody(
        required=True,
        content={FORM: VerbatimExampleMedia(schema=form, example={"file": IMPORT_CSV})},
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
