"""The query parameters of a listing in cursor pages: its ``limit``, and the ``cursor`` of
the listings whose position is (time, id), newest first (domain/lead_listing.PageCursor)."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Parameter

from leadmail.domain.lead_listing import MAX_PAGE_SIZE

Limit = Annotated[int, Parameter(ge=1, le=MAX_PAGE_SIZE)]
_POSITION = (
    "`next_cursor` of the previous page, as it came: a position,"
    " `<microseconds since 1970>.<{}>`, after which the page starts"
)
LeadCursor = Annotated[str | None, Parameter(description=_POSITION.format("lead id"))]
MessageCursor = Annotated[str | None, Parameter(description=_POSITION.format("message id"))]
ImportCursor = Annotated[str | None, Parameter(description=_POSITION.format("import id"))]
