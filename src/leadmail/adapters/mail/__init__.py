"""Outbound email: the httpx sender with one dialect per provider, and the console sender."""

from leadmail.adapters.mail.console import ConsoleEmailProvider
from leadmail.adapters.mail.dialects import Dialect, ProviderRequest, dialect_for
from leadmail.adapters.mail.factory import email_provider_from
from leadmail.adapters.mail.http import HttpEmailProvider

__all__ = [
    "ConsoleEmailProvider",
    "Dialect",
    "HttpEmailProvider",
    "ProviderRequest",
    "dialect_for",
    "email_provider_from",
]
