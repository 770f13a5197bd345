"""What the mail tests share: a message to send, and the HTTP provider aimed at a stand-in."""

from __future__ import annotations

import httpx
import pytest

from leadmail.adapters.mail.http import HttpEmailProvider
from leadmail.adapters.mail.providers import dialect_for
from leadmail.domain.delivery import DeliveryError
from leadmail.domain.email import Mailbox, OutgoingEmail
from leadmail.ports.mail import EmailProvider
from tests.support.standin import Provider, ProviderStandin

DOMAIN = "mg.school.example"
SECRET = "sk-live-9f8e7d6c5b4a39281706"
TIMEOUT = 5.0  # generous: only the timeout tests wait for it, with their own
SHORT_TIMEOUT = 0.3

EMAIL = OutgoingEmail(
    sender=Mailbox.parse("Zoë Ångström <zoe@school.example>"),
    to=(Mailbox.parse("李雷 <li@example.cn>"), Mailbox.parse("Lovelace, Ada <ada@example.org>")),
    subject="Grüße — 你好 🎉",
    html="<p>Willkommen im Kurs!</p>",
)


def key_for(provider: str) -> str:
    # Mailpit takes basic auth "user:password"; the others a single token.
    return f"leadmail:{SECRET}" if provider == "mailpit" else SECRET


def new_sender(
    provider: Provider,
    standin: ProviderStandin,
    *,
    timeout: float = TIMEOUT,
    api_key: str | None = None,
    client: httpx.AsyncClient | None = None,
) -> HttpEmailProvider:
    return HttpEmailProvider(
        dialect_for(provider, domain=DOMAIN),
        api_key=key_for(provider) if api_key is None else api_key,
        base_url=standin.url,
        timeout=timeout,
        client=client,
    )


async def failure_of(sender: EmailProvider, message_id: str = "msg_1") -> DeliveryError:
    with pytest.raises(DeliveryError) as caught:
        await sender.send(EMAIL, message_id=message_id)
    return caught.value
