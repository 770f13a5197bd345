"""Exporting leads as CSV: the leads of a segment, written as they are read, a page at a
time, so memory stays flat however many there are."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from leadmail.domain.lead_csv import csv_text, export_header, export_row
from leadmail.domain.lead_listing import LeadQuery, PageCursor
from leadmail.domain.segments import LeadFilter
from leadmail.ports.leads import LeadRepository

EXPORT_PAGE = 1_000  # leads read per query


class LeadExport:
    def __init__(self, leads: LeadRepository, page_size: int = EXPORT_PAGE) -> None:
        self._leads = leads
        self._page_size = page_size

    async def open(self, account_id: str, segment: LeadFilter) -> AsyncIterator[str]:
        """The CSV text of the segment's leads (header row first; one column per custom
        field key the segment's leads have, sorted), newest lead first, produced as it is
        consumed. The keys are read here, before the first byte is sent."""
        keys = await self._leads.field_keys(account_id, segment)
        return self._text(account_id, segment, keys)

    async def _text(
        self, account_id: str, segment: LeadFilter, keys: Sequence[str]
    ) -> AsyncIterator[str]:
        yield csv_text([export_header(keys)])
        after: PageCursor | None = None
        while True:
            query = LeadQuery(limit=self._page_size, after=after, filter=segment)
            found = await self._leads.list(account_id, query)
            page = found[: self._page_size]
            if page:
                yield csv_text(export_row(lead, keys) for lead in page)
            if len(found) <= self._page_size:
                return
            after = PageCursor(page[-1].created_at, page[-1].lead_id)
