"""Use case: what the providers' webhooks say became of our messages.

Each event is matched to the message its provider's id names (in any account: a provider
id is the provider's, not an account's), stored once per (provider, event id) and moves
the message's status forwards (domain/message_events.py). An event for a message we do
not know (sent by another system on the same provider account, or deleted) is dropped:
the provider is told it arrived, so it does not retry it forever.

A hard bounce or a complaint puts the addresses it names on the account's suppression
list. That is done before the event is stored, and only while it is not stored yet: were
it done after, a failure between the two would leave the event stored and its retry a
duplicate, and the address never suppressed. A retry after such a failure suppresses
again, which changes nothing (one entry per address); a replay of a stored event
suppresses nothing, so an address the account took off the list stays off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from leadmail.domain.clock import Clock
from leadmail.domain.email import Message
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.message_events import MessageEvent, ProviderEvent
from leadmail.domain.suppressions import SuppressionReason
from leadmail.ports.message_events import MessageEventRepository
from leadmail.services.suppressions import SuppressionList


@dataclass(frozen=True, slots=True)
class Received:
    """What became of a webhook's events: stored now, stored before (a replay or a
    duplicate: nothing changed), or about no message of ours (dropped)."""

    applied: int = 0
    duplicates: int = 0
    unknown: int = 0


class ProviderEventService:
    def __init__(
        self,
        events: MessageEventRepository,
        suppressions: SuppressionList,
        clock: Clock,
    ) -> None:
        self._events = events
        self._suppressions = suppressions
        self._clock = clock

    async def receive(self, events: Sequence[ProviderEvent]) -> Received:
        """Apply each event in turn (a provider sends them in the order they happened)."""
        applied = duplicates = unknown = 0
        for event in events:
            message = await self._events.find_message(event.provider, event.provider_message_id)
            if message is None:
                unknown += 1
                continue
            reason = event.suppresses
            if reason is not None and not await self._events.seen(event.provider, event.event_id):
                await self._suppress(message, event, reason)
            stored = MessageEvent.of(event, message.message_id, message.account_id)
            if await self._events.apply(stored, self._clock()):
                applied += 1
            else:
                duplicates += 1
        return Received(applied, duplicates, unknown)

    async def events_of(self, message: Message) -> list[MessageEvent]:
        """The provider's events of ``message``, oldest first."""
        return await self._events.list(message.account_id, message.message_id)

    async def _suppress(
        self, message: Message, event: ProviderEvent, reason: SuppressionReason
    ) -> None:
        # The addresses the event names; a message of one recipient is about that one.
        named = event.recipients or (message.to if len(message.to) == 1 else ())
        now = self._clock()
        for raw in named:
            try:
                await self._suppressions.record(
                    message.account_id, raw, reason, now=now, message_id=message.message_id
                )
            except ValidationFailed:
                continue  # not an address: nothing to keep from being mailed
