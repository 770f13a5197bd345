"""The registry: every email provider leadmail can send through, by its configured name.

The one list of providers. Settings check LEADMAIL_EMAIL_PROVIDER and what that provider
needs against it, the factory builds the provider from it. What a provider needs and
where its API is are its dialect's class attributes (dialects/<name>.py); this module only names
the dialects. It imports no HTTP client, so config.py can import it cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, TypeGuard

from leadmail.adapters.mail.dialects.base import Dialect
from leadmail.adapters.mail.dialects.mailgun import Mailgun
from leadmail.adapters.mail.dialects.mailpit import Mailpit
from leadmail.adapters.mail.dialects.postmark import Postmark
from leadmail.adapters.mail.dialects.resend import Resend
from leadmail.adapters.mail.dialects.sendgrid import SendGrid

CONSOLE: Final = "console"  # no API: each message is logged (console.py), nothing needed
CONSOLE_MAX_BATCH: Final = 1  # one log event per message: nothing to gain from batches

# Every provider with an HTTP API, by the name its dialect gives, in the documented order.
DIALECTS: Mapping[str, type[Dialect]] = MappingProxyType(
    {dialect.name: dialect for dialect in (Resend, Postmark, SendGrid, Mailgun, Mailpit)}
)

PROVIDER_NAMES: tuple[str, ...] = (CONSOLE, *DIALECTS)

# Settings.email_provider's type. A Literal cannot be derived from the names above, so they
# are spelled out again here; tests/unit/test_mail_providers.py holds the two equal.
ProviderName = Literal["console", "resend", "postmark", "sendgrid", "mailgun", "mailpit"]


def is_provider_name(name: str) -> TypeGuard[ProviderName]:
    return name in PROVIDER_NAMES


def max_batch_of(provider: str) -> int:
    """Messages one request to the provider may carry (its dialect's max_batch)."""
    return CONSOLE_MAX_BATCH if provider == CONSOLE else DIALECTS[provider].max_batch


def default_rate_of(provider: str) -> float:
    """Requests per second the provider allows by default; 0 = unlimited (the console)."""
    return 0.0 if provider == CONSOLE else DIALECTS[provider].default_rate


def dialect_for(provider: str, *, domain: str = "") -> Dialect:
    """The dialect of a provider by its configured name; ``domain`` is the sending domain,
    for a provider that needs one (Mailgun)."""
    dialect = DIALECTS.get(provider)
    if dialect is None:
        raise ValueError(f"no HTTP dialect for the email provider {provider!r}")
    return dialect.configured(domain=domain)
