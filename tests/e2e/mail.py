"""Servers that send through a real provider configuration, pointed at the stand-in of
tests/support/standin.py, and what the stand-in received."""

from __future__ import annotations

import contextlib
import email.utils
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.e2e.server import LeadmailServer, server_with_key
from tests.support.standin import (
    Provider,
    ProviderStandin,
    RecordedRequest,
    expected_auth,
    provider_standin,
)

MAILGUN_DOMAIN = "mg.academy.example.com"
# The sender of the e2e sends that need no sender of their own.
SENDER = "Academy <hello@academy.example.com>"


def provider_api_key(provider: Provider) -> str:
    """A fresh key in the provider's own shape (Mailpit's is ``user:password``), unique to
    the run so that finding it anywhere cannot be a coincidence."""
    token = secrets.token_hex(12)
    match provider:
        case "resend":
            return f"re_{token}"
        case "postmark":
            return str(uuid.uuid4())
        case "sendgrid":
            return f"SG.{token}.{secrets.token_hex(8)}"
        case "mailgun":
            return f"key-{token}"
        case "mailpit":
            return f"leadmail:{token}"


def email_env(provider: Provider, base_url: str, api_key: str, **settings: str) -> dict[str, str]:
    """The server settings that send through ``provider`` at ``base_url``; ``settings``
    adds LEADMAIL_EMAIL_* / LEADMAIL_* values by their name without the prefix."""
    env = {
        "LEADMAIL_EMAIL_PROVIDER": provider,
        "LEADMAIL_EMAIL_API_KEY": api_key,
        "LEADMAIL_EMAIL_BASE_URL": base_url,
        # The stand-in speaks plain HTTP on the loopback.
        "LEADMAIL_EMAIL_ALLOW_INSECURE": "true",
    }
    if provider == "mailgun":
        env["LEADMAIL_EMAIL_DOMAIN"] = MAILGUN_DOMAIN
    env.update({f"LEADMAIL_{name}": value for name, value in settings.items()})
    return env


def provider_path(provider: Provider) -> str:
    """The API path each provider documents for sending one message."""
    match provider:
        case "resend":
            return "/emails"
        case "postmark":
            return "/email"
        case "sendgrid":
            return "/v3/mail/send"
        case "mailgun":
            return f"/v3/{MAILGUN_DOMAIN}/messages"
        case "mailpit":
            return "/api/v1/send"


@dataclass
class EmailRig:
    """A server sending through ``provider`` to the stand-in, and a key for it."""

    provider: Provider
    server: LeadmailServer
    standin: ProviderStandin
    api_key: str
    secret: str

    def client(self) -> httpx.Client:
        return self.server.client(self.secret)

    def auth_header(self) -> tuple[str, str]:
        expected = expected_auth(self.provider, self.api_key)
        assert expected is not None
        return expected


@contextlib.contextmanager
def email_rig(
    provider: Provider, database_url: str, workdir: Path, *, name: str, **settings: str
) -> Iterator[EmailRig]:
    """A stand-in for ``provider`` (hanging 10 s when told to hang) and a server with a key
    sending through it; ``settings`` as for ``email_env``."""
    api_key = provider_api_key(provider)
    with provider_standin(api_key=api_key, hang_seconds=10) as standin:
        env = email_env(provider, standin.url, api_key, **settings)
        with server_with_key(database_url, workdir, extra_env=env, name=name) as server:
            assert server.primary is not None
            yield EmailRig(provider, server, standin, api_key, server.primary.secret)


@dataclass(frozen=True)
class Delivered:
    """One message as a provider received it, whatever its wire format."""

    sender_name: str
    sender: str
    to: tuple[str, ...]  # addresses only
    subject: str
    html: str


def _mailbox(text: str) -> tuple[str, str]:
    name, address = email.utils.parseaddr(text)
    return name, address


def delivered(request: RecordedRequest) -> Delivered:
    """Read a request the stand-in recorded in its provider's format."""
    match request.provider:
        case "resend":
            data = request.json()
            name, sender = _mailbox(data["from"])
            to = tuple(_mailbox(box)[1] for box in data["to"])
            return Delivered(name, sender, to, data["subject"], data["html"])
        case "postmark":
            data = request.json()
            name, sender = _mailbox(data["From"])
            to = tuple(address for _, address in email.utils.getaddresses([data["To"]]))
            return Delivered(name, sender, to, data["Subject"], data["HtmlBody"])
        case "sendgrid":
            data = request.json()
            [personalization] = data["personalizations"]
            *plain, content = data["content"]  # a text/plain part first, when sent
            assert [part["type"] for part in plain] in ([], ["text/plain"]), plain
            assert content["type"] == "text/html", content
            to = tuple(box["email"] for box in personalization["to"])
            sender = data["from"]
            return Delivered(
                sender.get("name", ""), sender["email"], to, data["subject"], content["value"]
            )
        case "mailgun":
            form = request.form()
            fields: dict[str, list[str]] = {}
            for key, value in form:
                fields.setdefault(key, []).append(value)
            [sender_text], [subject], [html] = fields["from"], fields["subject"], fields["html"]
            name, sender = _mailbox(sender_text)
            to = tuple(_mailbox(box)[1] for box in fields["to"])
            return Delivered(name, sender, to, subject, html)
        case "mailpit":
            data = request.json()
            sender = data["From"]
            to = tuple(box["Email"] for box in data["To"])
            return Delivered(
                sender.get("Name", ""), sender["Email"], to, data["Subject"], data["HTML"]
            )
    raise AssertionError(f"not a provider's send request: {request.method} {request.target}")
