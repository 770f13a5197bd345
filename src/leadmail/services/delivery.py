"""Handing messages to the provider: a bounded number at once, each retried with backoff
until it is accepted, refused for good, or the request's deadline comes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import (
    DeliveryError,
    ProviderRejected,
    ProviderUnavailable,
    RetryPolicy,
)
from leadmail.domain.email import Message, OutgoingEmail
from leadmail.ports.mail import EmailProvider


class Timer(Protocol):
    """Elapsed time and waiting, apart from the wall clock so tests can drive both."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemTimer:
    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# Messages handed to the provider at once, per process: as many as the HTTP provider keeps
# connections (adapters/mail/http.py), since a message in flight holds one; more would only
# queue for a connection, fewer would leave connections idle while messages wait.
DEFAULT_CONCURRENCY = 100


@dataclass(frozen=True, slots=True)
class DeliverySettings:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = DEFAULT_CONCURRENCY


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class Outcome:
    message: Message  # as it stands after this delivery
    error: DeliveryError | None  # why it failed, if it did


class Delivery:
    def __init__(
        self,
        provider: EmailProvider,
        settings: DeliverySettings,
        clock: Clock = utc_now,
        timer: Timer | None = None,
    ) -> None:
        self._provider = provider
        self._settings = settings
        self._clock = clock
        self._timer = timer if timer is not None else SystemTimer()
        self._slots: asyncio.Semaphore | None = None  # made in the running loop

    @property
    def provider(self) -> str:
        return self._provider.name

    async def deliver(self, pairs: Sequence[tuple[OutgoingEmail, Message]]) -> list[Outcome]:
        """Deliver each email as its message, concurrently, within one deadline."""
        deadline = self._timer.monotonic() + self._settings.retry.deadline
        return list(
            await asyncio.gather(
                *(self.deliver_one(email, message, deadline) for email, message in pairs)
            )
        )

    async def deliver_one(
        self, email: OutgoingEmail, message: Message, deadline: float | None = None
    ) -> Outcome:
        """Deliver ``email`` as ``message`` by ``deadline`` (by the timer; by default, the
        retry policy's deadline from now). A plain send: no task and no gather."""
        if deadline is None:
            deadline = self._timer.monotonic() + self._settings.retry.deadline
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._settings.concurrency)
        timer, policy, provider = self._timer, self._settings.retry, self._provider
        bound = provider.attempt_timeout
        attempts = message.attempts
        error: DeliveryError
        retry_after: float | None = None
        attempt = 1
        while True:
            remaining = deadline - timer.monotonic()
            if remaining <= 0:
                error = ProviderUnavailable("no answer before the delivery deadline")
                break
            attempts += 1
            try:
                async with self._slots:
                    remaining = deadline - timer.monotonic()
                    if bound is not None and bound < remaining:
                        # The provider ends the attempt first: no second timer for it.
                        provider_id = await provider.send(email, message_id=message.message_id)
                    else:
                        async with asyncio.timeout(remaining):
                            provider_id = await provider.send(email, message_id=message.message_id)
            except TimeoutError:
                error = ProviderUnavailable("no answer before the delivery deadline")
                break
            except ProviderRejected as e:
                error = e
                break
            except ProviderUnavailable as e:
                error = e
                retry_after = e.retry_after
            else:
                return Outcome(message.sent(provider_id, attempts, self._clock()), None)
            attempt += 1
            wait = policy.delay_before(attempt, retry_after, deadline - timer.monotonic())
            if wait is None:
                break
            await timer.sleep(wait)
        return Outcome(message.failed(error.message, attempts, self._clock()), error)
