"""Postmark's webhook payload: one record per request, told apart by ``RecordType``.
Bounces and spam complaints carry a record ``ID``; deliveries, opens and clicks have none,
so theirs is made of the message id, the type, the moment and the recipient."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from leadmail.domain.message_events import Bounce, EventType, ProviderEvent
from leadmail.domain.provider_events.reading import Reading, ident, iso, text

PROVIDER = "postmark"
# RecordType -> (type, the field with its moment, the field with its recipient)
_TYPES: dict[str, tuple[EventType, str, str]] = {
    "Delivery": (EventType.DELIVERED, "DeliveredAt", "Recipient"),
    "Bounce": (EventType.BOUNCED, "BouncedAt", "Email"),
    "SpamComplaint": (EventType.COMPLAINED, "BouncedAt", "Email"),
    "Open": (EventType.OPENED, "ReceivedAt", "Recipient"),
    "Click": (EventType.CLICKED, "ReceivedAt", "Recipient"),
}
# Bounce types after which Postmark itself stops mailing the address.
_HARD = frozenset({"HardBounce", "BadEmailAddress", "ManuallyDeactivated"})


def read(payload: Any) -> Reading:
    record = text(payload, "RecordType")
    if record is None:
        return Reading(unreadable=1)
    known = _TYPES.get(record)
    if known is None:  # SubscriptionChange, Inbound ...
        return Reading(ignored=1)
    type_, moment_field, recipient_field = known
    message_id, at = text(payload, "MessageID"), iso(payload, moment_field)
    recipient = text(payload, recipient_field)
    if message_id is None or at is None:
        return Reading(unreadable=1)
    bounce = None
    detail = text(payload, "Details") or ""
    if type_ is EventType.BOUNCED:
        hard = text(payload, "Type") in _HARD or payload.get("Inactive") is True
        bounce = Bounce.HARD if hard else Bounce.SOFT
        detail = text(payload, "Description") or detail
    elif type_ is EventType.CLICKED:
        detail = text(payload, "OriginalLink") or ""
    event_id = ident(payload, "ID") or _composed(message_id, record, at, recipient)
    try:
        event = ProviderEvent.of(
            PROVIDER, event_id, message_id, type_, at,
            detail=detail, bounce=bounce, recipients=(recipient,) if recipient else (),
        )  # fmt: skip
    except ValueError:
        return Reading(unreadable=1)
    return Reading([event])


def _composed(message_id: str, record: str, at: datetime, recipient: str | None) -> str:
    # One message has one delivery per recipient: the recipient keeps two apart that
    # share their moment.
    return f"{message_id}/{record}/{at.isoformat()}/{recipient or ''}"
