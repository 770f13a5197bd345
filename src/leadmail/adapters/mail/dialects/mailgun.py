"""Mailgun's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self
from urllib.parse import quote

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    ProviderRequest,
    basic_auth,
    clip,
    json_object,
    plain_text,
)
from leadmail.domain.email import OutgoingEmail


class Mailgun(Dialect):
    name = "mailgun"
    default_base_url = "https://api.mailgun.net"  # EU: https://api.eu.mailgun.net
    needs_domain = True

    def __init__(self, domain: str) -> None:
        if not domain.strip():
            raise ValueError("Mailgun needs the sending domain (LEADMAIL_EMAIL_DOMAIN)")
        self.domain = domain.strip()

    @classmethod
    def configured(cls, *, domain: str = "") -> Self:
        return cls(domain)

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        form: tuple[tuple[str, str], ...] = (
            ("from", email.sender.formatted()),
            *(("to", box.formatted()) for box in email.to),
            ("subject", email.subject),
            ("html", email.html),
            *((("text", email.text),) if email.text is not None else ()),
            ("v:leadmail_message_id", message_id),
            # Any header as "h:<name>" (the description's h:X-My-Header pattern).
            *((("h:Reply-To", email.reply_to.formatted()),) if email.reply_to else ()),
        )
        if email.headers:
            form += tuple((f"h:{name}", value) for name, value in email.headers)
        return ProviderRequest(
            method="POST", path=f"/v3/{quote(self.domain, safe='')}/messages", form=form
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": basic_auth("api", api_key)}

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"message": "..."}; a 401 is the plain text "Forbidden".
        message = json_object(body).get("message")
        if isinstance(message, str) and message:
            return clip(message)
        return plain_text(body)
