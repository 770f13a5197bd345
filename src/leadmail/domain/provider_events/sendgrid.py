"""SendGrid's Event Webhook: a JSON array of events, each with its own ``sg_event_id`` and
``sg_message_id`` (the send answer's ``X-Message-Id`` followed by ``.filter...``)."""

from __future__ import annotations

from typing import Any

from leadmail.domain.message_events import Bounce, EventType, ProviderEvent
from leadmail.domain.provider_events.reading import Reading, epoch, text, texts

PROVIDER = "sendgrid"
_TYPES = {
    "delivered": EventType.DELIVERED,
    "deferred": EventType.DEFERRED,
    "bounce": EventType.BOUNCED,
    "spamreport": EventType.COMPLAINED,
    "open": EventType.OPENED,
    "click": EventType.CLICKED,
}


def read(payload: Any) -> Reading:
    if not isinstance(payload, list):
        return Reading(unreadable=1)
    reading = Reading()
    for item in payload:
        reading.add(_one(item))
    return reading


def _one(item: Any) -> Reading:
    kind = text(item, "event")
    if kind is None:
        return Reading(unreadable=1)
    type_ = _TYPES.get(kind)
    if type_ is None:  # processed, dropped, unsubscribe, group_unsubscribe ...
        return Reading(ignored=1)
    event_id, message_id, at = (
        text(item, "sg_event_id"),
        text(item, "sg_message_id"),
        epoch(item, "timestamp"),
    )
    if event_id is None or message_id is None or at is None:
        return Reading(unreadable=1)
    bounce = None
    detail = text(item, "response") or ""
    if type_ is EventType.BOUNCED:
        # "bounce": the server refused the address; "blocked": it refused this message
        # (a block list, content), which says nothing of the address.
        bounce = Bounce.SOFT if text(item, "type") == "blocked" else Bounce.HARD
        detail = text(item, "reason") or text(item, "status") or ""
    elif type_ is EventType.CLICKED:
        detail = text(item, "url") or ""
    try:
        event = ProviderEvent.of(
            PROVIDER, event_id, message_id, type_, at,
            detail=detail, bounce=bounce, recipients=texts(item, "email"),
        )  # fmt: skip
    except ValueError:
        return Reading(unreadable=1)
    return Reading([event])
