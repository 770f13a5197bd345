"""A lead's timeline: what happened to one lead, newest first, a page at a time.

Built from what is stored, never by scanning the account's messages: the lead itself (its
creation), its own events (``lead_events``: the changes that leave no other trace, and the
imports that wrote it), the messages sent to its address (through the message log's
address index), and its entry on the suppression list. Each source is read in the same
order, from the same position, and the pages are merged: entries sort by time, then by
source, then by their id within the source, all descending.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from leadmail.domain.email import Message
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import EPOCH, MICROSECOND, PageCursor
from leadmail.domain.leads import CLIENT_FIELDS, Lead
from leadmail.domain.message_events import MessageEvent
from leadmail.domain.suppressions import Suppression
from leadmail.domain.tags import TagChange

# Ids within a source sort as text: a lead event's number, zero-padded to this width.
EVENT_ID_WIDTH = 19
# Above every id a source has (ids are [A-Za-z0-9_-] and digits): "all of that moment".
AFTER_EVERY_ID = "~"
CURSOR = re.compile(r"^([0-9]{1,17})\.([0-2])\.([A-Za-z0-9_-]{1,40})$")  # sources 0-2


class LeadEventKind(enum.StrEnum):
    UPDATED = "updated"  # detail: {"fields": [the names changed]}
    TAGS_CHANGED = "tags_changed"  # detail: {"add": [...], "remove": [...]}, as asked
    IMPORTED = "imported"  # detail: {"import_id": ..., "created": true | false}


@dataclass(frozen=True, slots=True)
class LeadEvent:
    """A change of a lead that leaves no other trace. ``event_id`` is the store's (0
    before it is stored); it orders the events of one moment."""

    account_id: str
    lead_id: str
    kind: LeadEventKind
    at: datetime
    detail: Mapping[str, object] = field(default_factory=dict)
    event_id: int = 0

    @property
    def position(self) -> str:
        return f"{self.event_id:0{EVENT_ID_WIDTH}d}"


def updated(before: Lead, after: Lead) -> LeadEvent | None:
    """The event of an update: the client fields it changed, custom fields by
    ``fields.<key>`` (sorted); None when it changed nothing."""
    names = [name for name in CLIENT_FIELDS if name != "fields" and
             getattr(before, name) != getattr(after, name)]  # fmt: skip
    keys = set(before.fields) | set(after.fields)
    names += sorted(f"fields.{key}" for key in keys
                    if before.fields.get(key) != after.fields.get(key))  # fmt: skip
    if not names:
        return None
    return LeadEvent(after.account_id, after.lead_id, LeadEventKind.UPDATED, after.updated_at,
                     {"fields": names})  # fmt: skip


def tags_changed(lead: Lead, change: TagChange) -> LeadEvent:
    """The event of a tag change, as asked (what was added or removed already is too)."""
    return LeadEvent(
        lead.account_id,
        lead.lead_id,
        LeadEventKind.TAGS_CHANGED,
        lead.updated_at,
        {"add": list(change.add), "remove": list(change.remove)},
    )


def imported(lead: Lead, import_id: str, created: bool, at: datetime) -> LeadEvent:
    """The event of an import that created or updated the lead."""
    detail = {"import_id": import_id, "created": created}
    return LeadEvent(lead.account_id, lead.lead_id, LeadEventKind.IMPORTED, at, detail)


class Source(enum.IntEnum):
    """Where an entry comes from; of one moment, a higher source is newer."""

    LEAD = 0  # the lead's creation, and its events
    MESSAGE = 1
    SUPPRESSION = 2


@dataclass(frozen=True, slots=True)
class TimelineCursor:
    """The position after an entry: its time, its source, its id within the source.
    Written ``<microseconds since 1970>.<source>.<id>``."""

    at: datetime
    source: Source
    key: str

    def encode(self) -> str:
        return f"{(self.at - EPOCH) // MICROSECOND}.{int(self.source)}.{self.key}"

    @classmethod
    def decode(cls, token: str) -> TimelineCursor:
        match = CURSOR.fullmatch(token)
        if match is None:
            raise ValidationFailed.one("cursor", "is not a cursor this service issued")
        micros, source, key = match.groups()
        return cls(EPOCH + int(micros) * MICROSECOND, Source(int(source)), key)

    def bound(self, source: Source) -> PageCursor:
        """Where ``source`` goes on from, as a (time, id) position read strictly after:
        of this very moment, a lower source's entries all come after this one, a higher
        source's none."""
        if source is self.source:
            return PageCursor(self.at, self.key)
        return PageCursor(self.at, AFTER_EVERY_ID if source < self.source else "")


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One thing that happened. ``kind``: created, updated, tags_changed, imported,
    message, suppressed. ``message`` and its ``events`` for a message; ``detail`` says
    the rest (an event's, or a suppression's reason and origin)."""

    at: datetime
    source: Source
    key: str
    kind: str
    detail: Mapping[str, object] = field(default_factory=dict)
    message: Message | None = None
    events: Sequence[MessageEvent] = ()

    @property
    def cursor(self) -> TimelineCursor:
        return TimelineCursor(self.at, self.source, self.key)

    def sort_key(self) -> tuple[datetime, int, str]:
        return (self.at, int(self.source), self.key)


def created(lead: Lead) -> TimelineEntry:
    return TimelineEntry(lead.created_at, Source.LEAD, "0", "created")  # before every event


def of_event(event: LeadEvent) -> TimelineEntry:
    return TimelineEntry(event.at, Source.LEAD, event.position, str(event.kind), event.detail)


def of_message(message: Message, events: Sequence[MessageEvent]) -> TimelineEntry:
    return TimelineEntry(message.created_at, Source.MESSAGE, message.message_id, "message",
                         {}, message, events)  # fmt: skip


def of_suppression(entry: Suppression) -> TimelineEntry:
    detail: dict[str, object] = {"reason": str(entry.reason)}
    if entry.message_id is not None:
        detail["message_id"] = entry.message_id
    if entry.campaign_id is not None:
        detail["campaign_id"] = entry.campaign_id
    return TimelineEntry(entry.created_at, Source.SUPPRESSION, "s", "suppressed", detail)


@dataclass(frozen=True, slots=True)
class TimelinePage:
    entries: list[TimelineEntry]
    next_cursor: str | None


def merged(found: Sequence[TimelineEntry], after: TimelineCursor | None,
           limit: int) -> TimelinePage:  # fmt: skip
    """The page of ``limit`` entries after ``after`` among what the sources found (each
    source read ``limit + 1`` after the same position), newest first."""
    shown = sorted(
        (e for e in found if after is None or e.sort_key() < _key(after)),
        key=TimelineEntry.sort_key,
        reverse=True,
    )
    if len(shown) <= limit:
        return TimelinePage(shown, None)
    return TimelinePage(shown[:limit], shown[limit - 1].cursor.encode())


def _key(cursor: TimelineCursor) -> tuple[datetime, int, str]:
    return (cursor.at, int(cursor.source), cursor.key)
