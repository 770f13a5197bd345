from __future__ import annotations

from typing import Protocol

from leadmail.domain.email import OutgoingEmail


class EmailProvider(Protocol):
    """Hands one message to an email provider, in one attempt (retries are the caller's).

    Returns the provider's id for the message (None if the provider gives none). Raises
    ProviderRejected when the provider refuses it for good (4xx other than 429), and
    ProviderUnavailable when it cannot take it now (connection error, timeout, 429, 5xx),
    with the Retry-After it asked for, if any.
    """

    @property
    def name(self) -> str:
        """The provider's name as configured: resend, postmark, console, ..."""
        ...

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        """``message_id`` is ours; providers that deduplicate (Resend) get it as their
        idempotency key, so a retried attempt is never delivered twice."""
        ...

    async def close(self) -> None: ...
