"""ProviderEventService (services/provider_events.py) on the memory adapters: events matched
to messages in any account, applied once, unknown ones dropped, hard bounces and complaints
suppressing the addresses they name, once."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.email import Message, MessageStatus, new_message_id
from leadmail.domain.message_events import Bounce, EventType, ProviderEvent
from leadmail.domain.suppressions import Suppression, SuppressionReason, address_digest
from leadmail.services.provider_events import ProviderEventService, Received
from leadmail.services.suppressions import SuppressionList
from tests.unit.fakes import START, FakeClock


class Rig:
    def __init__(self) -> None:
        self.messages = MemoryMessageRepository()
        self.events = MemoryMessageEventRepository(self.messages)
        self.suppressions = MemorySuppressionRepository()
        self.clock = FakeClock(tick=timedelta(milliseconds=1))
        self.service = ProviderEventService(
            self.events, SuppressionList(self.suppressions, self.clock), self.clock
        )

    async def sent(
        self, to: tuple[str, ...] = ('"Ada" <Ada@Example.com>',), account: str = "acc_a"
    ) -> Message:
        message = Message(
            new_message_id(), account, "team@school.example", to, "Hello", None,
            MessageStatus.PENDING, "resend", None, 0, "", START, START,
        )  # fmt: skip
        await self.messages.add([message])
        sent = message.sent(f"re-{message.message_id}", 1, START)
        await self.messages.update([sent])
        return sent

    async def entries(self, account: str = "acc_a") -> list[Suppression]:
        return await self.suppressions.list(account, 100)

    async def status(self, message: Message) -> MessageStatus:
        stored = await self.messages.get(message.account_id, message.message_id)
        assert stored is not None
        return stored.status


def event(
    message: Message,
    type_: EventType,
    event_id: str,
    *,
    bounce: Bounce | None = None,
    recipients: tuple[str, ...] = (),
) -> ProviderEvent:
    assert message.provider_message_id is not None
    return ProviderEvent.of(
        "resend", event_id, message.provider_message_id, type_, START,
        bounce=bounce, recipients=recipients,
    )  # fmt: skip


async def test_events_apply_once_and_unknown_ones_are_dropped() -> None:
    rig = Rig()
    message = await rig.sent()
    delivered = event(message, EventType.DELIVERED, "e1")
    stranger = dataclasses.replace(delivered, event_id="e2", provider_message_id="not-ours")

    first = await rig.service.receive([delivered, stranger, event(message, EventType.OPENED, "e3")])
    again = await rig.service.receive([delivered])

    assert first == Received(applied=2, duplicates=0, unknown=1)
    assert again == Received(applied=0, duplicates=1, unknown=0)
    assert await rig.status(message) is MessageStatus.DELIVERED
    assert [e.type for e in await rig.events.list(message.account_id, message.message_id)] == [
        EventType.DELIVERED,
        EventType.OPENED,
    ]


async def test_a_hard_bounce_suppresses_the_address_it_names_in_the_messages_account() -> None:
    rig = Rig()
    message = await rig.sent(to=("ada@example.com", "bob@example.com"), account="acc_school")
    bounce = event(
        message, EventType.BOUNCED, "b1", bounce=Bounce.HARD, recipients=("Bob@Example.com",)
    )

    await rig.service.receive([bounce])

    [entry] = await rig.entries("acc_school")
    assert entry.account_id == "acc_school"
    assert entry.digest == address_digest("bob@example.com")
    assert entry.reason is SuppressionReason.BOUNCED
    assert entry.message_id == message.message_id
    assert await rig.status(message) is MessageStatus.BOUNCED


async def test_a_complaint_without_addresses_suppresses_a_one_recipient_messages_address() -> None:
    rig = Rig()
    message = await rig.sent()  # '"Ada" <Ada@Example.com>'

    await rig.service.receive([event(message, EventType.COMPLAINED, "c1")])

    [entry] = await rig.entries()
    assert (entry.digest, entry.reason) == (
        address_digest("ada@example.com"),
        SuppressionReason.COMPLAINED,
    )


async def test_soft_bounces_and_deferrals_are_recorded_only() -> None:
    rig = Rig()
    message = await rig.sent()

    received = await rig.service.receive(
        [
            event(message, EventType.BOUNCED, "s1", bounce=Bounce.SOFT),
            event(message, EventType.DEFERRED, "d1"),
        ]
    )

    assert received.applied == 2
    assert await rig.entries() == []
    assert await rig.status(message) is MessageStatus.SENT


async def test_a_replayed_bounce_does_not_put_back_an_address_taken_off_the_list() -> None:
    rig = Rig()
    message = await rig.sent()
    bounce = event(message, EventType.BOUNCED, "b1", bounce=Bounce.HARD)
    await rig.service.receive([bounce])
    [entry] = await rig.entries()
    assert await rig.suppressions.remove(entry.account_id, entry.digest)

    assert await rig.service.receive([bounce]) == Received(duplicates=1)
    assert await rig.entries() == []


async def test_a_late_delivery_after_a_bounce_leaves_it_bounced() -> None:
    rig = Rig()
    message = await rig.sent()

    await rig.service.receive(
        [
            event(message, EventType.BOUNCED, "b1", bounce=Bounce.HARD),
            event(message, EventType.DELIVERED, "d1"),
        ]
    )

    assert await rig.status(message) is MessageStatus.BOUNCED
