"""Outbound email: the httpx sender with one dialect per provider, and the console sender."""

from leadmail.adapters.mail.console import ConsoleMailSender
from leadmail.adapters.mail.dialects import Dialect, ProviderRequest, dialect_for
from leadmail.adapters.mail.factory import mail_sender_from
from leadmail.adapters.mail.http import HttpMailSender

__all__ = [
    "ConsoleMailSender",
    "Dialect",
    "HttpMailSender",
    "ProviderRequest",
    "dialect_for",
    "mail_sender_from",
]
