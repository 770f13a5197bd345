"""The EmailProvider that Settings ask for."""

from __future__ import annotations

from leadmail.adapters.mail.console import ConsoleEmailProvider
from leadmail.adapters.mail.providers import CONSOLE, dialect_for
from leadmail.adapters.mail.unused import UnusedEmailProvider
from leadmail.config import Settings
from leadmail.ports.mail import EmailProvider


def email_provider_from(settings: Settings, *, sending: bool = True) -> EmailProvider:
    """``console`` logs each message; every other provider in the registry is
    HttpEmailProvider with that provider's dialect. Raises ValueError when a setting the provider
    needs is missing (Settings.require_for refuses those already). ``sending`` False: for a
    command that sends nothing, UnusedEmailProvider, which needs none of those settings."""
    if not sending:
        return UnusedEmailProvider(settings.email_provider)
    if settings.email_provider == CONSOLE:
        return ConsoleEmailProvider()
    from leadmail.adapters.mail.http import HttpEmailProvider  # httpx: only when used

    return HttpEmailProvider(
        dialect_for(settings.email_provider, domain=settings.email_domain),
        api_key=settings.email_api_key,
        base_url=settings.email_base_url,
        timeout=settings.email_timeout,
    )
