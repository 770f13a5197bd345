"""Resend's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    ProviderRequest,
    clip,
    json_object,
    plain_text,
)
from leadmail.domain.email import OutgoingEmail


class Resend(Dialect):
    name = "resend"
    default_base_url = "https://api.resend.com"
    # Resend keeps the first answer for a key for 24 h: a retried attempt of the same
    # message (say, after a timeout) is not delivered twice.
    idempotency_header = "Idempotency-Key"

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            path="/emails",
            headers={self.idempotency_header: message_id},
            json={
                "from": email.sender.formatted(),
                "to": [box.formatted() for box in email.to],
                "subject": email.subject,
                "html": email.html,
            },
        )

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"statusCode": 422, "name": "validation_error", "message": "..."}
        data = json_object(body)
        message, name = data.get("message"), data.get("name")
        if isinstance(message, str) and message:
            return clip(f"{name}: {message}" if isinstance(name, str) and name else message)
        return plain_text(body)

    def retryable(self, status: int, body: bytes) -> bool:
        # 409 concurrent_idempotent_requests: an earlier attempt with this key (one we gave
        # up waiting for) is still in progress at Resend. It may yet be delivered, so this
        # is "not now", never "refused".
        if status == 409 and json_object(body).get("name") == "concurrent_idempotent_requests":
            return True
        return super().retryable(status, body)
