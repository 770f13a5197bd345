"""A lead's timeline on the wire (GET /api/v1/leads/{lead_id}/timeline)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from leadmail.adapters.http.schemas import LeadId, MessageOut
from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.lead_timeline import TimelineEntry, TimelinePage

TimelineKindOut = Literal["created", "updated", "tags_changed", "imported", "message", "suppressed"]


class TimelineEntryOut(msgspec.Struct):
    at: str
    kind: TimelineKindOut
    # updated: {fields}; tags_changed: {add, remove}; imported: {import_id, created};
    # suppressed: {reason, message_id?, campaign_id?}; created and message: {}.
    detail: dict[str, Any]
    message: MessageOut | None  # a message's own entry: as getMessage gives it

    @classmethod
    def of(cls, entry: TimelineEntry) -> TimelineEntryOut:
        message = None if entry.message is None else MessageOut.of(entry.message, entry.events)
        return cls(
            at=to_iso(entry.at),
            kind=entry.kind,  # type: ignore[arg-type]  # one of TimelineKindOut
            detail=dict(entry.detail),
            message=message,
        )


class TimelineOut(msgspec.Struct):
    lead_id: LeadId
    items: list[TimelineEntryOut]
    next_cursor: str | None

    @classmethod
    def of(cls, lead_id: str, page: TimelinePage) -> TimelineOut:
        return cls(lead_id, [TimelineEntryOut.of(e) for e in page.entries], page.next_cursor)
