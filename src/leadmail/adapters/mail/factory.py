"""The MailSender that Settings ask for."""

from __future__ import annotations

from leadmail.adapters.mail.console import ConsoleMailSender
from leadmail.adapters.mail.dialects import dialect_for
from leadmail.adapters.mail.http import HttpMailSender
from leadmail.config import Settings
from leadmail.ports.mail import MailSender


def mail_sender_from(settings: Settings) -> MailSender:
    """``console`` logs each message; every other provider is the HTTP sender with that
    provider's dialect. Raises ValueError when a setting the provider needs is missing
    (Settings.from_env refuses those already)."""
    if settings.email_provider == "console":
        return ConsoleMailSender()
    return HttpMailSender(
        dialect_for(settings.email_provider, domain=settings.email_domain),
        api_key=settings.email_api_key,
        base_url=settings.email_base_url,
        timeout=settings.email_timeout,
    )
