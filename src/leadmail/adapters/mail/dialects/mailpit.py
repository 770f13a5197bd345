"""Mailpit's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    JsonObject,
    ProviderRequest,
    basic_auth,
    clip,
    json_object,
    plain_text,
)
from leadmail.domain.email import Mailbox, OutgoingEmail


class Mailpit(Dialect):
    name = "mailpit"
    default_base_url = "http://localhost:8025"
    needs_api_key = False  # optional: "user:password" for basic auth, see auth_headers
    plain_http = True  # a development inbox: plain HTTP by default, and it delivers nowhere

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        body: JsonObject = {
            "From": _mailpit_address(email.sender),
            "To": [_mailpit_address(box) for box in email.to],
            "Subject": email.subject,
            "HTML": email.html,
        }
        if email.text is not None:
            body["Text"] = email.text
        if email.reply_to is not None:  # an array of {Email, Name?}
            body["ReplyTo"] = [_mailpit_address(email.reply_to)]
        if email.headers:  # an object of name -> value
            body["Headers"] = dict(email.headers)
        return ProviderRequest(method="POST", path="/api/v1/send", json=body)

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """No auth by default; an api key ``user:password`` is sent as basic auth, for a
        Mailpit started with --api-auth-file."""
        if not api_key:
            return {}
        user, colon, password = api_key.partition(":")
        if not colon:
            raise ValueError("the Mailpit API key must be 'user:password' (basic auth)")
        return {"Authorization": basic_auth(user, password)}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        value = json_object(body).get("ID")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"Error": "..."}, or a plain-text message
        message = json_object(body).get("Error")
        if isinstance(message, str) and message:
            return clip(message)
        return plain_text(body)


def _mailpit_address(box: Mailbox) -> dict[str, str]:
    return {"Email": box.address, "Name": box.name} if box.name else {"Email": box.address}
