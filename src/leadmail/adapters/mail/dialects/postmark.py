"""Postmark's HTTP API: what it expects and how to read its answers."""

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


class Postmark(Dialect):
    name = "postmark"
    default_base_url = "https://api.postmarkapp.com"

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        # Postmark's published description (Swagger 2.0) has no MessageStream field: the
        # server's default transactional stream, "outbound", is used.
        return ProviderRequest(
            method="POST",
            path="/email",
            headers={"Accept": "application/json"},
            json={
                "From": email.sender.formatted(),
                "To": ", ".join(box.formatted() for box in email.to),
                "Subject": email.subject,
                "HtmlBody": email.html,
            },
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"X-Postmark-Server-Token": api_key}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        value = json_object(body).get("MessageID")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"ErrorCode": 300, "Message": "..."}
        data = json_object(body)
        message, code = data.get("Message"), data.get("ErrorCode")
        if isinstance(message, str) and message:
            return clip(f"{message} (ErrorCode {code})" if isinstance(code, int) else message)
        return plain_text(body)
