"""What each provider's HTTP API expects, and how to read what it answers.

A dialect only translates: an OutgoingEmail into one ProviderRequest, a response into the
provider's message id or its own error text. It does no I/O and knows no API key beyond
turning it into headers, so the contract tests can check its requests against the
providers' published API descriptions without a network.

Each dialect class is also where its provider's facts are written, once: its configured
name, its public API, whether it needs an API key or a sending domain. The registry
(providers.py) lists the classes; the settings and the factory read these attributes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self
from urllib.parse import quote

from leadmail.domain.email import Mailbox, OutgoingEmail

# The provider's own error text is cut to this. It is not MAX_LAST_ERROR (domain/email.py),
# the longer limit of a message's stored last_error, which holds our sentence around it.
MAX_PROVIDER_TEXT = 500

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """One HTTP request, less the base URL and the auth headers (the sender adds both).

    The body is either ``json`` or ``form``: form fields in order, a name may repeat; the
    sender encodes them as multipart/form-data."""

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    json: JsonObject | None = None
    form: tuple[tuple[str, str], ...] = ()


class Dialect:
    """The defaults every provider shares; each provider overrides what differs."""

    name: ClassVar[str]  # as LEADMAIL_EMAIL_PROVIDER names it
    default_base_url: ClassVar[str]  # the public API, used when no base URL is configured
    needs_api_key: ClassVar[bool] = True  # LEADMAIL_EMAIL_API_KEY is required
    needs_domain: ClassVar[bool] = False  # LEADMAIL_EMAIL_DOMAIN is required
    # The header that carries our message id as the provider's idempotency key, so a
    # retried attempt is not delivered twice; "" when the provider has no such key.
    idempotency_header: ClassVar[str] = ""

    @classmethod
    def configured(cls, *, domain: str = "") -> Self:
        """The dialect for these settings; ``domain`` matters only where needs_domain."""
        return cls()

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        raise NotImplementedError

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Bearer auth; providers with another scheme override this."""
        return {"Authorization": f"Bearer {api_key}"}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        """The provider's id for an accepted message, None if the answer carries none."""
        value = _json_object(body).get("id")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        """The provider's own words for a failed request, at most MAX_PROVIDER_TEXT long."""
        return _plain_text(body)

    def retryable(self, status: int, body: bytes) -> bool:
        """Whether a non-2xx answer means "not now" rather than "never" (see the port)."""
        return status == 429 or status >= 500


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
        data = _json_object(body)
        message, name = data.get("message"), data.get("name")
        if isinstance(message, str) and message:
            return _clip(f"{name}: {message}" if isinstance(name, str) and name else message)
        return _plain_text(body)

    def retryable(self, status: int, body: bytes) -> bool:
        # 409 concurrent_idempotent_requests: an earlier attempt with this key (one we gave
        # up waiting for) is still in progress at Resend. It may yet be delivered, so this
        # is "not now", never "refused".
        if status == 409 and _json_object(body).get("name") == "concurrent_idempotent_requests":
            return True
        return super().retryable(status, body)


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
        value = _json_object(body).get("MessageID")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"ErrorCode": 300, "Message": "..."}
        data = _json_object(body)
        message, code = data.get("Message"), data.get("ErrorCode")
        if isinstance(message, str) and message:
            return _clip(f"{message} (ErrorCode {code})" if isinstance(code, int) else message)
        return _plain_text(body)


class SendGrid(Dialect):
    name = "sendgrid"
    default_base_url = "https://api.sendgrid.com"

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            path="/v3/mail/send",
            json={
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
                "content": [{"type": "text/html", "value": email.html}],
            },
        )

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        # 202 Accepted with an empty body; the id is in a header.
        return _header(headers, "X-Message-Id") or None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"errors": [{"message": "...", "field": "...", "help": ...}]}
        errors = _json_object(body).get("errors")
        if isinstance(errors, list):
            parts = []
            for error in errors:
                if isinstance(error, dict) and isinstance(error.get("message"), str):
                    where = error.get("field")
                    text = error["message"]
                    parts.append(f"{where}: {text}" if isinstance(where, str) and where else text)
            if parts:
                return _clip("; ".join(parts))
        return _plain_text(body)


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
        return ProviderRequest(
            method="POST",
            path=f"/v3/{quote(self.domain, safe='')}/messages",
            form=(
                ("from", email.sender.formatted()),
                *(("to", box.formatted()) for box in email.to),
                ("subject", email.subject),
                ("html", email.html),
                ("v:leadmail_message_id", message_id),
            ),
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": _basic("api", api_key)}

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"message": "..."}; a 401 is the plain text "Forbidden".
        message = _json_object(body).get("message")
        if isinstance(message, str) and message:
            return _clip(message)
        return _plain_text(body)


class Mailpit(Dialect):
    name = "mailpit"
    default_base_url = "http://localhost:8025"
    needs_api_key = False  # optional: "user:password" for basic auth, see auth_headers

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            path="/api/v1/send",
            json={
                "From": _mailpit_address(email.sender),
                "To": [_mailpit_address(box) for box in email.to],
                "Subject": email.subject,
                "HTML": email.html,
            },
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """No auth by default; an api key ``user:password`` is sent as basic auth, for a
        Mailpit started with --api-auth-file."""
        if not api_key:
            return {}
        user, colon, password = api_key.partition(":")
        if not colon:
            raise ValueError("the Mailpit API key must be 'user:password' (basic auth)")
        return {"Authorization": _basic(user, password)}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        value = _json_object(body).get("ID")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"Error": "..."}, or a plain-text message
        message = _json_object(body).get("Error")
        if isinstance(message, str) and message:
            return _clip(message)
        return _plain_text(body)


def _sendgrid_address(box: Mailbox) -> dict[str, str]:
    return {"email": box.address, "name": box.name} if box.name else {"email": box.address}


def _mailpit_address(box: Mailbox) -> dict[str, str]:
    return {"Email": box.address, "Name": box.name} if box.name else {"Email": box.address}


def _basic(user: str, password: str) -> str:
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def _header(headers: Mapping[str, str], name: str) -> str:
    # httpx.Headers ignores case; a plain dict (in tests) may not.
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), "")


def _json_object(body: bytes) -> JsonObject:
    """The body as a JSON object, or {} if it is anything else."""
    try:
        data = json.loads(body)
    except ValueError:  # not JSON, or not UTF-8
        return {}
    return data if isinstance(data, dict) else {}


def _plain_text(body: bytes) -> str:
    return _clip(body.decode("utf-8", errors="replace"))


def _clip(text: str) -> str:
    """One line, at most MAX_PROVIDER_TEXT characters."""
    flat = " ".join(text.split())
    if len(flat) <= MAX_PROVIDER_TEXT:
        return flat
    return flat[: MAX_PROVIDER_TEXT - 1] + "…"
