"""The provider of a command that sends no email (migrate, keys, accounts, leads,
campaigns status): named as configured, so the wiring is the one `serve` gets, yet built
from none of the provider's settings, so those commands start without them (an API key,
a domain). Only `serve` and `worker` send; they check those settings before they start
(Settings.require_for)."""

from __future__ import annotations

from collections.abc import Sequence

from leadmail.adapters.mail.providers import max_batch_of
from leadmail.domain.delivery import BatchItem, ItemResult
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

NOT_SENDING = "this command sends no email"


class UnusedEmailProvider(EmailProvider):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"UnusedEmailProvider({self._name!r})"

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        raise RuntimeError(NOT_SENDING)

    @property
    def attempt_timeout(self) -> float | None:
        return None

    @property
    def batch_limit(self) -> int:
        return max_batch_of(self._name)

    @property
    def keeps_idempotency(self) -> bool:
        return False

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        raise RuntimeError(NOT_SENDING)

    async def close(self) -> None:
        return None
