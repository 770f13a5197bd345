"""SendGrid's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    JsonObject,
    ProviderRequest,
    clip,
    header,
    json_object,
    plain_text,
)
from leadmail.domain.email import Mailbox, OutgoingEmail


class SendGrid(Dialect):
    name = "sendgrid"
    default_base_url = "https://api.sendgrid.com"

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        body: JsonObject = {
            "personalizations": [
                {
                    "to": [_sendgrid_address(box) for box in email.to],
                    # The top-level custom_args is a string in SendGrid's description;
                    # the per-personalization one is the object of name -> value.
                    "custom_args": {"leadmail_message_id": message_id},
                }
            ],
            "from": _sendgrid_address(email.sender),
            "subject": email.subject,
            # text/plain first, as SendGrid requires, when there is one.
            "content": [
                *([{"type": "text/plain", "value": email.text}] if email.text is not None else []),
                {"type": "text/html", "value": email.html},
            ],
        }
        if email.reply_to is not None:  # a MailTo: {email, name?}
            body["reply_to"] = _sendgrid_address(email.reply_to)
        if email.headers:  # the message's own, an object of name -> value
            body["headers"] = dict(email.headers)
        return ProviderRequest(method="POST", path="/v3/mail/send", json=body)

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        # 202 Accepted with an empty body; the id is in a header.
        return header(headers, "X-Message-Id") or None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"errors": [{"message": "...", "field": "...", "help": ...}]}
        errors = json_object(body).get("errors")
        if isinstance(errors, list):
            parts = []
            for error in errors:
                if isinstance(error, dict) and isinstance(error.get("message"), str):
                    where = error.get("field")
                    text = error["message"]
                    parts.append(f"{where}: {text}" if isinstance(where, str) and where else text)
            if parts:
                return clip("; ".join(parts))
        return plain_text(body)


def _sendgrid_address(box: Mailbox) -> dict[str, str]:
    return {"email": box.address, "name": box.name} if box.name else {"email": box.address}
