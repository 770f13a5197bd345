from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from leadmail.domain.delivery import DeliveryError
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider


@dataclass(frozen=True, slots=True)
class Delivered:
    message_id: str
    email: OutgoingEmail
    provider_id: str  # what send returned for it


class RecordingEmailProvider(EmailProvider):
    """Accepts every message and keeps it, unless told to fail the next attempts.

    ``fail_next(error, times)`` makes the next ``times`` attempts raise ``error``;
    ``fail_for(address, error)`` makes every attempt to that recipient raise it."""

    def __init__(self, name: str = "recording") -> None:
        self._name = name
        self.delivered: list[Delivered] = []
        self.attempts = 0
        self._failures: deque[DeliveryError] = deque()
        self._by_recipient: dict[str, DeliveryError] = {}

    @property
    def name(self) -> str:
        return self._name

    def fail_next(self, error: DeliveryError, times: int = 1) -> None:
        self._failures.extend([error] * times)

    def fail_for(self, address: str, error: DeliveryError | None) -> None:
        if error is None:
            self._by_recipient.pop(address, None)
        else:
            self._by_recipient[address] = error

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        self.attempts += 1
        if self._failures:
            raise self._failures.popleft()
        for box in email.to:
            if box.address in self._by_recipient:
                raise self._by_recipient[box.address]
        provider_id = f"rec-{len(self.delivered) + 1}"
        self.delivered.append(Delivered(message_id, email, provider_id))
        return provider_id

    async def close(self) -> None:
        return None
