"""The timeline's rules (domain/lead_timeline.py): what an update's event names, cursors
written and read back, where each source goes on from, and the merge of the sources."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.lead_timeline import (
    AFTER_EVERY_ID,
    LeadEvent,
    LeadEventKind,
    Source,
    TimelineCursor,
    TimelineEntry,
    created,
    merged,
    of_event,
    updated,
)
from leadmail.domain.leads import Lead

AT = datetime(2026, 3, 2, 9, 30, 15, 123456, tzinfo=UTC)
LEAD = Lead("ld_1", "acc_1", "Ada", "ada@example.com", "web", "", "", AT, AT,
            ("vip",), {"city": "Leeds", "age": 34})  # fmt: skip


def test_an_update_names_the_fields_it_changed_and_none_is_no_event() -> None:
    later = AT + timedelta(minutes=1)
    after = replace(LEAD, name="Ada L", tags=(), fields={"city": "York", "zip": "LS1"},
                    updated_at=later)  # fmt: skip

    event = updated(LEAD, after)

    assert event is not None
    assert (event.kind, event.at, event.lead_id) == (LeadEventKind.UPDATED, later, "ld_1")
    assert event.detail == {"fields": ["name", "tags", "fields.age", "fields.city", "fields.zip"]}
    assert updated(LEAD, replace(LEAD, updated_at=later)) is None


@pytest.mark.parametrize("source", list(Source))
def test_a_cursor_reads_back_as_written(source: Source) -> None:
    cursor = TimelineCursor(AT, source, "msg_Ab-9_x")

    assert TimelineCursor.decode(cursor.encode()) == cursor


@pytest.mark.parametrize("token", ["", "x", "1.3.a", "1.1.", "1.1.a b", "12345678901234567890.1.a"])
def test_a_cursor_not_issued_here_is_refused(token: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        TimelineCursor.decode(token)

    assert refused.value.errors[0].field == "cursor"


def test_each_source_goes_on_from_the_cursor_s_moment_by_its_rank() -> None:
    at_message = TimelineCursor(AT, Source.MESSAGE, "msg_1")

    assert at_message.bound(Source.MESSAGE) == PageCursor(AT, "msg_1")
    assert at_message.bound(Source.LEAD) == PageCursor(AT, AFTER_EVERY_ID)  # all of AT
    assert at_message.bound(Source.SUPPRESSION) == PageCursor(AT, "")  # none of AT


def test_the_merge_orders_by_time_source_and_id_and_cuts_a_page() -> None:
    event = LeadEvent("acc_1", "ld_1", LeadEventKind.UPDATED, AT, {"fields": ["name"]}, 7)
    message = TimelineEntry(AT, Source.MESSAGE, "msg_1", "message")
    older = TimelineEntry(AT - timedelta(seconds=1), Source.SUPPRESSION, "s", "suppressed")
    found = [created(LEAD), older, of_event(event), message]

    first = merged(found, None, 2)
    assert [e.kind for e in first.entries] == ["message", "updated"]
    assert first.next_cursor is not None
    rest = merged(found, TimelineCursor.decode(first.next_cursor), 2)
    assert [e.kind for e in rest.entries] == ["created", "suppressed"]
    assert rest.next_cursor is None
