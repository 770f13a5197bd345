"""The one way out: every message leaves through here, an API send's and a campaign's alike.

A send is one or more batches (an API send: a batch of one per message; a campaign: the
recipients it leased) and goes, in order:

1. record: its messages stored ``pending`` before the provider is called (``record``);
2. policy: the rules every message obeys (services/send_policy.py, applied by the callers
   before they record, since what it refuses is never stored);
3. pace: before each request, the pace the batch is given (a campaign's shared rate and
   the provider's 429 holds; an API send's is free), so every rule of timing is one object;
4. ``send_batch``: one provider request per batch, retried with backoff under the batch's
   own key (``attempt``, the one retry loop), a bounded number at the provider at once;
5. record the outcome: ``Delivered`` (the one result type) says what became of the batch,
   and ``settled`` what its messages are now; the caller stores them with what it keeps
   of its own (an idempotency claim, a campaign's recipients).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import (
    BatchItem,
    DeliveryError,
    ItemResult,
    ProviderRejected,
    ProviderUnavailable,
    RetryPolicy,
)
from leadmail.domain.email import Message
from leadmail.ports.mail import EmailProvider
from leadmail.ports.messages import MessageRepository
from leadmail.services.fair_slots import FairSlots

# Why a message that was never answered failed: the time for its request ran out.
NO_ANSWER = "no answer before the delivery deadline"
# Of an API send's deadline, kept for recording its messages' outcomes and answering: 20
# concurrent 50-recipient template sends on SQLite, all ending at their deadline, answered
# up to 0.8 s past it when their attempts could run to it (e2e test_fair_delivery).
ANSWER_RESERVE_S = 1.5


class Timer(Protocol):
    """Elapsed time and waiting, apart from the wall clock so tests can drive both."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemTimer:
    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# Requests at the provider at once, per process: as many as the HTTP provider keeps
# connections (adapters/mail/http.py), since a request in flight holds one; more would only
# queue for a connection, fewer would leave connections idle while messages wait.
DEFAULT_CONCURRENCY = 100


@dataclass(frozen=True, slots=True)
class DeliverySettings:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = DEFAULT_CONCURRENCY


class Pace(Protocol):
    """How a batch's requests are timed. ``paced``: ``take`` must be asked before each
    request (False: nothing to ask, the request goes at once)."""

    paced: bool

    async def take(self, deadline: float) -> bool:
        """Wait for this request's turn; False when the batch should be handed back
        instead (its campaign stopped, or ``deadline``, by the timer, came first)."""
        ...

    async def hold(self, error: ProviderUnavailable) -> float | None:
        """A 429: the seconds every request of the pace now waits, or None when the pace
        keeps no hold (then the 429 is backed off from as any failure)."""
        ...

    async def wait(self, seconds: float) -> bool:
        """Wait ``seconds`` before the next try; False when the batch should be handed back
        instead."""
        ...


class Unpaced:
    """An API send's pace: no rate of its own (the provider's 429 is backed off from, its
    Retry-After honoured), never handed back."""

    paced = False

    def __init__(self, timer: Timer) -> None:
        self._timer = timer

    async def take(self, deadline: float) -> bool:
        return True

    async def hold(self, error: ProviderUnavailable) -> None:
        return None

    async def wait(self, seconds: float) -> bool:
        await self._timer.sleep(seconds)
        return True


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class Delivered:
    """What became of one batch: the provider's answer (``results``, one per item), the
    error given up on, a retry refused for its reused key (``landed_before``), or none of
    them: the batch was handed back unsent (its pace stopped it, or its time ran out
    first). ``may_have_landed``: an attempt got no answer. ``attempts``: requests made."""

    attempts: int
    results: list[ItemResult] | None = None
    error: DeliveryError | None = None
    may_have_landed: bool = False
    landed_before: ProviderRejected | None = None

    @property
    def handed_back(self) -> bool:
        return self.results is None and self.error is None and self.landed_before is None


class Outgoing:
    def __init__(
        self,
        messages: MessageRepository,
        provider: EmailProvider,
        settings: DeliverySettings,
        clock: Clock = utc_now,
        timer: Timer | None = None,
    ) -> None:
        self._messages = messages
        self._provider = provider
        self._settings = settings
        self._clock = clock
        self._timer = timer if timer is not None else SystemTimer()
        self.unpaced = Unpaced(self._timer)
        self._slots: FairSlots | None = None  # made in the running loop

    @property
    def provider(self) -> str:
        return self._provider.name

    @property
    def timer(self) -> Timer:
        return self._timer

    def deadline(self, budget: float | None = None) -> float:
        """When a send begun now must be over, by the timer: ``budget`` seconds from now,
        by default the retry policy's deadline."""
        seconds = self._settings.retry.deadline if budget is None else budget
        return self._timer.monotonic() + seconds

    def attempts_deadline(self) -> float:
        """When an API send's provider attempts (and its waits for a slot) must be over
        for its answer to be within the retry policy's deadline of the request: the
        deadline less what recording the outcomes and answering may take
        (ANSWER_RESERVE_S, at most a tenth of the deadline)."""
        seconds = self._settings.retry.deadline
        return self._timer.monotonic() + seconds - min(ANSWER_RESERVE_S, seconds / 10)

    async def record(
        self,
        account_id: str,
        items: Sequence[BatchItem],
        template_id: str | None,
        stored: Mapping[str, Message] | None = None,
        *,
        withheld: Mapping[str, str] | None = None,
        template_version: int | None = None,
        test: bool = False,
        campaign_id: str | None = None,
    ) -> dict[str, Message]:
        """Step 1: each item's message, stored ``pending`` before the provider is called,
        by message id; those in ``stored`` (a retry's, recorded before) are not stored
        again; those in ``withheld`` (the send policy's, by message id: why) are stored
        ``suppressed``, never to be sent."""
        now = self._clock()
        new = self.pending(
            account_id,
            [item for item in items if stored is None or item.message_id not in stored],
            template_id,
            template_version,
            test,
            campaign_id,
        )
        if withheld:
            new = [
                m.suppressed(why, now) if (why := withheld.get(m.message_id)) else m for m in new
            ]
        if new:
            await self._messages.add(new)
        found = {} if stored is None else dict(stored)
        found.update((m.message_id, m) for m in new)
        return found

    def pending(
        self,
        account_id: str,
        items: Sequence[BatchItem],
        template_id: str | None,
        template_version: int | None = None,
        test: bool = False,
        campaign_id: str | None = None,
    ) -> list[Message]:
        """Each item's message as step 1 records it (``pending``), not yet stored."""
        now, provider = self._clock(), self._provider.name
        return [
            Message.pending(
                item.message_id, account_id, item.email, template_id, provider, now,
                template_version, test, campaign_id,
            )
            for item in items
        ]  # fmt: skip

    async def deliver_each(
        self, account_id: str, items: Sequence[BatchItem], deadline: float
    ) -> list[Delivered]:
        """Steps 3-4 for an API send: each item as a batch of one (its message on its own,
        keyed by its message id), unpaced, at once, all by ``deadline``."""
        if len(items) == 1:  # a plain send: no task and no gather
            return [await self.attempt(account_id, items, None, self.unpaced, deadline)]
        return list(
            await asyncio.gather(
                *(self.attempt(account_id, (item,), None, self.unpaced, deadline) for item in items)
            )
        )

    async def attempt(
        self,
        account_id: str,
        items: Sequence[BatchItem],
        key: str | None,
        pace: Pace,
        deadline: float,
        *,
        retried: bool = False,
    ) -> Delivered:
        """Steps 3-4, the one retry loop: ``items`` in one provider request under ``key``
        as the provider's idempotency key (``send_batch``; None: one message on its own,
        ``send``, keyed by its message id), tried until an answer, a refusal, or giving
        up; ``pace`` asked before each request. A 429 the pace holds for does not count
        as a try. ``retried``: the batch was sent under ``key`` before and may have landed
        (a 409 then means it did). A request waits for one of the provider's slots, shared
        fairly between accounts (``account_id``'s turn), and that wait counts against
        ``deadline``."""
        timer, policy, provider = self._timer, self._settings.retry, self._provider
        if self._slots is None:
            self._slots = FairSlots(self._settings.concurrency)
        slots, bound = self._slots, provider.attempt_timeout
        single, batch_key = (items[0], "") if key is None else (None, key)
        attempts, tries, landed = 0, 1, False
        while True:
            if pace.paced and not await pace.take(deadline):
                return Delivered(attempts, may_have_landed=landed)
            error: ProviderUnavailable
            if not slots.try_acquire(account_id):
                waited = deadline - timer.monotonic()
                try:
                    async with asyncio.timeout(max(waited, 0.0)):
                        await slots.acquire(account_id)
                except TimeoutError:  # no slot before the deadline: handed back unsent
                    return Delivered(attempts, may_have_landed=landed)
            try:
                try:
                    remaining = deadline - timer.monotonic()
                    if remaining <= 0:
                        return Delivered(attempts, may_have_landed=landed)
                    attempts += 1
                    if bound is not None and bound < remaining:
                        # The provider ends the attempt first: no second timer for it.
                        if single is not None:
                            answer = await provider.send(single.email, message_id=single.message_id)
                            return Delivered(attempts, [ItemResult(single.message_id, answer)])
                        return Delivered(
                            attempts, await provider.send_batch(items, batch_key=batch_key)
                        )
                    async with asyncio.timeout(remaining):
                        if single is not None:
                            answer = await provider.send(single.email, message_id=single.message_id)
                            return Delivered(attempts, [ItemResult(single.message_id, answer)])
                        return Delivered(
                            attempts, await provider.send_batch(items, batch_key=batch_key)
                        )
                finally:
                    slots.release(account_id)
            except TimeoutError:
                error = ProviderUnavailable(NO_ANSWER)
            except ProviderRejected as e:
                if retried and e.status == 409:  # the key was used: it landed before
                    return Delivered(attempts, landed_before=e)
                return Delivered(attempts, error=e, may_have_landed=landed)
            except ProviderUnavailable as e:
                error = e
            landed = landed or error.status is None or error.status == 409
            left = deadline - timer.monotonic()
            held = await pace.hold(error) if error.throttled else None
            if held is not None:
                if held >= left:
                    return Delivered(attempts, may_have_landed=landed)
                wait = 0.0  # the pace's next turn comes after the hold
            else:
                tries += 1
                backoff = policy.delay_before(tries, error.retry_after, left)
                if backoff is None:
                    return Delivered(attempts, error=error, may_have_landed=landed)
                wait = backoff
            if not await pace.wait(wait):
                return Delivered(attempts, may_have_landed=landed)

    def settled(
        self, message: Message, delivered: Delivered, result: ItemResult | None
    ) -> tuple[Message, DeliveryError | None]:
        """Step 5 for one message of an answered or given-up batch: the message as it is now
        (sent, or failed and why), with its error. ``result``: the provider's answer for it,
        when the batch was answered. A batch handed back, or refused for its reused key,
        fails every message with NO_ANSWER or that refusal."""
        now, attempts = self._clock(), message.attempts + delivered.attempts
        if result is not None:
            if result.error is None:
                return message.sent(result.provider_message_id, attempts, now), None
            return message.failed(result.error.message, attempts, now), result.error
        error: DeliveryError = (
            delivered.error or delivered.landed_before or ProviderUnavailable(NO_ANSWER)
        )
        return message.failed(error.message, attempts, now), error

    async def store(self, changed: Sequence[Message]) -> None:
        """Step 5: what became of the messages, stored in one statement."""
        if changed:
            await self._messages.update(changed)
