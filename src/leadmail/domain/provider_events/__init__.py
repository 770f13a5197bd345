"""Each provider's webhook payload (its JSON, decoded) read as ProviderEvents: one module
per provider, each knowing its payload's shape, its types and its ids."""

from __future__ import annotations

from typing import Any

from leadmail.domain.provider_events import mailgun, postmark, resend, sendgrid
from leadmail.domain.provider_events.reading import Reading

__all__ = ["PROVIDERS", "Reading", "read_events"]

# The providers whose webhooks the service reads, in the documented order.
PROVIDERS = ("resend", "postmark", "sendgrid", "mailgun")


def read_events(provider: str, payload: Any, delivery_id: str = "") -> Reading:
    """The events of ``provider``'s decoded payload. ``delivery_id``: the id the request
    itself carries (Resend's ``svix-id``), for a provider whose events have none inside."""
    if provider == "resend":
        return resend.read(payload, delivery_id)
    if provider == "postmark":
        return postmark.read(payload)
    if provider == "sendgrid":
        return sendgrid.read(payload)
    if provider == "mailgun":
        return mailgun.read(payload)
    raise ValueError(f"no webhook reader for {provider!r}")
