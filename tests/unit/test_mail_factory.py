"""email_provider_from: the provider Settings ask for, built without any I/O."""

from __future__ import annotations

import pytest

from leadmail.adapters.mail.console import ConsoleEmailProvider
from leadmail.adapters.mail.factory import email_provider_from
from leadmail.adapters.mail.http import HttpEmailProvider
from leadmail.adapters.mail.providers import ProviderName
from leadmail.adapters.mail.unused import UnusedEmailProvider
from leadmail.config import Settings

KEY = "sk-test-abcdef0123456789"


async def test_console_is_the_default() -> None:
    sender = email_provider_from(Settings())

    assert isinstance(sender, ConsoleEmailProvider)
    assert sender.name == "console"
    await sender.close()


@pytest.mark.parametrize(
    ("provider", "public_api"),
    [
        ("resend", "https://api.resend.com"),
        ("postmark", "https://api.postmarkapp.com"),
        ("sendgrid", "https://api.sendgrid.com"),
        ("mailgun", "https://api.mailgun.net"),
        ("mailpit", "http://localhost:8025"),
    ],
)
async def test_each_http_provider_gets_its_dialect_and_public_api(
    provider: ProviderName, public_api: str
) -> None:
    settings = Settings(
        email_provider=provider,
        email_api_key="" if provider == "mailpit" else KEY,
        email_domain="mg.school.example",
        email_timeout=2.5,
    )

    sender = email_provider_from(settings)

    assert isinstance(sender, HttpEmailProvider)
    assert sender.name == provider
    assert sender.base_url == public_api
    assert sender.timeout == 2.5
    assert KEY not in repr(sender)
    await sender.close()


async def test_a_base_url_from_the_environment_wins() -> None:
    settings = Settings.from_env(
        {
            "LEADMAIL_EMAIL_PROVIDER": "mailgun",
            "LEADMAIL_EMAIL_API_KEY": KEY,
            "LEADMAIL_EMAIL_DOMAIN": "mg.school.example",
            "LEADMAIL_EMAIL_BASE_URL": "https://api.eu.mailgun.net/",
        }
    )

    sender = email_provider_from(settings)

    assert isinstance(sender, HttpEmailProvider)
    assert sender.base_url == "https://api.eu.mailgun.net"
    await sender.close()


async def test_credentials_in_the_base_url_stay_out_of_the_repr() -> None:
    settings = Settings(
        email_provider="mailpit", email_base_url="http://ops:hunter2@mailpit.internal:8025"
    )

    sender = email_provider_from(settings)

    assert repr(sender) == (
        "HttpEmailProvider(name='mailpit', base_url='http://mailpit.internal:8025')"
    )
    await sender.close()


@pytest.mark.parametrize(
    ("settings", "complaint"),
    [
        (Settings(email_provider="resend"), "needs an API key"),
        (Settings(email_provider="mailgun", email_api_key=KEY), "sending domain"),
        (Settings(email_provider="mailpit", email_api_key="no-colon"), "user:password"),
        (
            Settings(email_provider="sendgrid", email_api_key=KEY, email_base_url="ftp://x"),
            "http:// or https://",
        ),
        (Settings(email_provider="postmark", email_api_key=KEY, email_timeout=0), "timeout"),
    ],
)
def test_settings_a_provider_cannot_work_with_are_refused(
    settings: Settings, complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint) as caught:
        email_provider_from(settings)

    assert KEY not in str(caught.value)


@pytest.mark.parametrize(("provider", "batch"), [("resend", 100), ("mailgun", 1), ("console", 1)])
async def test_a_command_that_sends_nothing_gets_a_provider_that_needs_no_settings(
    provider: ProviderName, batch: int
) -> None:
    settings = Settings(email_provider=provider)  # no key, no domain: not needed to send nothing

    unused = email_provider_from(settings, sending=False)

    assert isinstance(unused, UnusedEmailProvider)
    assert (unused.name, unused.batch_limit, unused.keeps_idempotency) == (provider, batch, False)
    with pytest.raises(RuntimeError, match="sends no email"):
        await unused.send_batch([], batch_key="b")
    await unused.close()
