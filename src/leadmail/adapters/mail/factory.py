"""The EmailProvider that Settings ask for."""

from __future__ import annotations

from leadmail.adapters.mail.console import ConsoleEmailProvider
from leadmail.adapters.mail.providers import CONSOLE, dialect_for
from leadmail.config import Settings
from leadmail.ports.mail import EmailProvider


def email_provider_from(settings: Settings) -> EmailProvider:
    """``console`` logs each message; every other provider in the registry is
    HttpEmailProvider with that provider's dialect. Raises ValueError when a setting the provider
    needs is missing (Settings.from_env refuses those already)."""
    if settings.email_provider == CONSOLE:
        return ConsoleEmailProvider()
    from leadmail.adapters.mail.http import HttpEmailProvider  # httpx: only when used

    return HttpEmailProvider(
        dialect_for(settings.email_provider, domain=settings.email_domain),
        api_key=settings.email_api_key,
        base_url=settings.email_base_url,
        timeout=settings.email_timeout,
    )
