"""Mailgun's webhook payload: one event per request, ``{signature, event-data}``; the
message id in ``event-data.message.headers.message-id`` has no angle brackets, though the
send answer's id has them."""

from __future__ import annotations

from typing import Any

from leadmail.domain.message_events import Bounce, EventType, ProviderEvent
from leadmail.domain.provider_events.reading import Reading, epoch, obj, text, texts

PROVIDER = "mailgun"
_TYPES = {
    "delivered": EventType.DELIVERED,
    "failed": EventType.BOUNCED,
    "complained": EventType.COMPLAINED,
    "opened": EventType.OPENED,
    "clicked": EventType.CLICKED,
}


def read(payload: Any) -> Reading:
    data = obj(payload, "event-data")
    kind = text(data, "event")
    if data is None or kind is None:
        return Reading(unreadable=1)
    type_ = _TYPES.get(kind)
    if type_ is None:  # accepted, rejected, stored, unsubscribed ...
        return Reading(ignored=1)
    event_id, at = text(data, "id"), epoch(data, "timestamp")
    message_id = text(data, "message", "headers", "message-id")
    if event_id is None or message_id is None or at is None:
        return Reading(unreadable=1)
    bounce = None
    status = obj(data, "delivery-status")
    detail = text(status, "description") or text(status, "message") or ""
    if type_ is EventType.BOUNCED:
        # "permanent": Mailgun gave up on the address; "temporary": it will try again.
        bounce = Bounce.HARD if text(data, "severity") == "permanent" else Bounce.SOFT
        detail = detail or text(data, "reason") or ""
    elif type_ is EventType.CLICKED:
        detail = text(data, "url") or ""
    try:
        event = ProviderEvent.of(
            PROVIDER, event_id, message_id, type_, at,
            detail=detail, bounce=bounce, recipients=texts(data, "recipient"),
        )  # fmt: skip
    except ValueError:
        return Reading(unreadable=1)
    return Reading([event])
