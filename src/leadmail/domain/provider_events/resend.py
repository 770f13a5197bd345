"""Resend's webhook payload: one event per request, ``{type, created_at, data}``; its id is
the request's ``svix-id`` header (the same on every retry of the event)."""

from __future__ import annotations

from typing import Any

from leadmail.domain.message_events import Bounce, EventType, ProviderEvent
from leadmail.domain.provider_events.reading import Reading, iso, obj, text, texts

PROVIDER = "resend"
_TYPES = {
    "email.delivered": EventType.DELIVERED,
    "email.delivery_delayed": EventType.DEFERRED,
    "email.bounced": EventType.BOUNCED,
    "email.complained": EventType.COMPLAINED,
    "email.opened": EventType.OPENED,
    "email.clicked": EventType.CLICKED,
}


def read(payload: Any, delivery_id: str) -> Reading:
    kind = text(payload, "type")
    if kind is None:
        return Reading(unreadable=1)
    type_ = _TYPES.get(kind)
    if type_ is None:  # email.sent, email.failed, contact.*, domain.*: not ours to keep
        return Reading(ignored=1)
    data = obj(payload, "data")
    email_id = text(data, "email_id")
    at = iso(payload, "created_at") or iso(data, "created_at")
    if email_id is None or at is None:
        return Reading(unreadable=1)
    bounce, detail = None, ""
    if type_ is EventType.BOUNCED:
        # SES's bounce types, which Resend passes on: only Permanent is an address that
        # does not exist; Transient and Undetermined may take mail later.
        bounce = Bounce.HARD if text(data, "bounce", "type") in ("Permanent", None) else Bounce.SOFT
        detail = text(data, "bounce", "message") or " ".join(
            texts(data, "bounce", "diagnosticCode")
        )
    elif type_ is EventType.CLICKED:
        detail = text(data, "click", "link") or ""
    try:
        event = ProviderEvent.of(
            PROVIDER, delivery_id, email_id, type_, at,
            detail=detail, bounce=bounce, recipients=texts(data, "to"),
        )  # fmt: skip
    except ValueError:
        return Reading(unreadable=1)
    return Reading([event])
