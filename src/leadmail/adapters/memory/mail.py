from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from leadmail.domain.delivery import (
    BatchItem,
    DeliveryError,
    ItemResult,
    ProviderRejected,
    check_batch,
)
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
    ``fail_for(address, error)`` makes every attempt to that recipient raise it (in a batch
    of more than one, a ProviderRejected is that message's own refusal, as Postmark
    answers; any other error fails the whole batch). ``batch_limit`` > 1 takes batches of
    up to that many in one attempt (``batch_keys`` lists each attempt's key);
    ``keeps_idempotency`` answers a batch key seen before as the first time, without
    delivering again (and refuses it, 409, for other messages), as Resend does."""

    def __init__(
        self, name: str = "recording", *, batch_limit: int = 1, keeps_idempotency: bool = False
    ) -> None:
        self._name = name
        self._batch_limit = batch_limit
        self._keeps_idempotency = keeps_idempotency
        self.delivered: list[Delivered] = []
        self.attempts = 0
        self.batch_keys: list[str] = []  # of each batch attempt, in order (replays included)
        self._failures: deque[DeliveryError] = deque()
        self._by_recipient: dict[str, DeliveryError] = {}
        self._answered: dict[str, tuple[tuple[str, ...], list[ItemResult]]] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def attempt_timeout(self) -> float | None:
        return None

    @property
    def batch_limit(self) -> int:
        return self._batch_limit

    @property
    def keeps_idempotency(self) -> bool:
        return self._keeps_idempotency

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
        self._check_recipients(email)
        return self._deliver(email, message_id)

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        check_batch(items, self._batch_limit)
        if self._batch_limit == 1:  # one message through "the single endpoint", as send()
            [item] = items
            return [
                ItemResult(item.message_id, await self.send(item.email, message_id=item.message_id))
            ]
        self.attempts += 1
        self.batch_keys.append(batch_key)
        ids = tuple(item.message_id for item in items)
        if batch_key in self._answered:
            seen, results = self._answered[batch_key]
            if seen != ids:
                raise ProviderRejected(409, "this idempotency key was used for another batch")
            return list(results)
        if self._failures:
            raise self._failures.popleft()
        refusals: list[ProviderRejected | None] = []
        for item in items:  # any other failure raises here, before anything is delivered
            try:
                self._check_recipients(item.email)
            except ProviderRejected as e:
                refusals.append(e)
            else:
                refusals.append(None)
        results = [
            ItemResult(item.message_id, None, refusal)
            if refusal is not None
            else ItemResult(item.message_id, self._deliver(item.email, item.message_id))
            for item, refusal in zip(items, refusals, strict=True)
        ]
        if self._keeps_idempotency:
            self._answered[batch_key] = (ids, results)
        return list(results)

    async def close(self) -> None:
        return None

    def _check_recipients(self, email: OutgoingEmail) -> None:
        for box in email.to:
            if box.address in self._by_recipient:
                raise self._by_recipient[box.address]

    def _deliver(self, email: OutgoingEmail, message_id: str) -> str:
        provider_id = f"rec-{len(self.delivered) + 1}"
        self.delivered.append(Delivered(message_id, email, provider_id))
        return provider_id
