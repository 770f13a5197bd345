"""The MessageEventRepository contract (ports/message_events.py), run against every adapter:
each event applied once per (provider, event id), a message's status moved only forwards,
a message found by its provider's id, its events listed oldest first."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from datetime import datetime

import pytest

from leadmail.adapters.db.message_events import PiccoloMessageEventRepository
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.domain.email import Message, MessageStatus
from leadmail.domain.message_events import Bounce, EventType, MessageEvent
from leadmail.ports.message_events import MessageEventRepository
from tests.contract.support import Storage, a_message, is_utc, moment

NOW = moment(60_000)


@pytest.fixture
def events(storage: Storage) -> MessageEventRepository:
    if storage.database is None:
        assert isinstance(storage.messages, MemoryMessageRepository)
        return MemoryMessageEventRepository(storage.messages)
    return PiccoloMessageEventRepository(storage.database)


async def a_sent_message(
    storage: Storage, account: str, provider: str = "resend", provider_id: str | None = None
) -> Message:
    """A message handed to ``provider``, which answered ``provider_id`` (a fresh one)."""
    pending = dataclasses.replace(a_message(account), provider=provider)
    await storage.messages.add([pending])
    sent = pending.sent(provider_id or f"pm-{secrets.token_hex(8)}", 1, moment(1))
    await storage.messages.update([sent])
    return sent


def an_event(
    message: Message,
    type_: EventType = EventType.DELIVERED,
    *,
    bounce: Bounce | None = None,
    at: datetime | None = None,
    event_id: str | None = None,
    detail: str = "",
) -> MessageEvent:
    return MessageEvent(
        message_id=message.message_id,
        account_id=message.account_id,
        provider=message.provider,
        event_id=event_id or f"ev-{secrets.token_hex(8)}",
        type=type_,
        bounce=bounce,
        at=at or moment(2_000),
        detail=detail,
    )


async def status_of(storage: Storage, message: Message) -> MessageStatus:
    stored = await storage.messages.get(message.account_id, message.message_id)
    assert stored is not None
    return stored.status


class TestApplyOnce:
    async def test_an_event_is_stored_once_and_a_replay_changes_nothing(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)
        event = an_event(message, detail="250 2.0.0 OK")

        assert not await events.seen(message.provider, event.event_id)
        assert await events.apply(event, NOW) is True
        assert await events.seen(message.provider, event.event_id)
        again = dataclasses.replace(event, at=moment(9_000), detail="another body, same id")
        assert await events.apply(again, moment(70_000)) is False

        assert await events.list(account, message.message_id) == [event]
        stored = await storage.messages.get(account, message.message_id)
        assert stored is not None
        assert stored.status is MessageStatus.DELIVERED
        assert stored.updated_at == NOW  # the first apply's moment, not the replay's

    async def test_one_event_id_of_another_provider_is_another_event(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        resend = await a_sent_message(storage, account, "resend")
        postmark = await a_sent_message(storage, account, "postmark")
        shared_id = f"ev-{secrets.token_hex(8)}"

        assert await events.apply(an_event(resend, event_id=shared_id), NOW)
        assert await events.apply(an_event(postmark, event_id=shared_id), NOW)

        assert len(await events.list(account, resend.message_id)) == 1
        assert len(await events.list(account, postmark.message_id)) == 1

    async def test_many_deliveries_of_one_event_at_once_store_it_once(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)
        event = an_event(message, EventType.BOUNCED, bounce=Bounce.HARD)

        stored = await asyncio.gather(*(events.apply(event, NOW) for _ in range(8)))

        assert sorted(stored) == [False] * 7 + [True]
        assert await events.list(account, message.message_id) == [event]
        assert await status_of(storage, message) is MessageStatus.BOUNCED

    async def test_every_field_and_moment_comes_back_as_stored(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)
        event = an_event(
            message,
            EventType.BOUNCED,
            bounce=Bounce.SOFT,
            at=moment(-5),
            detail="452 4.2.2 Mailbox full — ✓ 'quoted' \"double\" %_",
        )

        await events.apply(event, NOW)

        [back] = await events.list(account, message.message_id)
        assert back == event
        assert isinstance(back.type, EventType)
        assert back.bounce is Bounce.SOFT
        assert is_utc(back.at)


_DELIVERED = (EventType.DELIVERED, None)
_HARD = (EventType.BOUNCED, Bounce.HARD)
_COMPLAINED = (EventType.COMPLAINED, None)


class TestStatusOrder:
    @pytest.mark.parametrize(
        ("types", "expected"),
        [
            ([_DELIVERED], MessageStatus.DELIVERED),
            ([_HARD], MessageStatus.BOUNCED),
            ([_COMPLAINED], MessageStatus.COMPLAINED),
            # never backwards: a late delivery after a bounce leaves it bounced
            ([_HARD, _DELIVERED], MessageStatus.BOUNCED),
            ([_DELIVERED, _COMPLAINED], MessageStatus.COMPLAINED),
            ([_COMPLAINED, _HARD], MessageStatus.COMPLAINED),
            # recorded only
            ([(EventType.BOUNCED, Bounce.SOFT)], MessageStatus.SENT),
            ([(EventType.DEFERRED, None)], MessageStatus.SENT),
            ([_DELIVERED, (EventType.OPENED, None), (EventType.CLICKED, None)],
             MessageStatus.DELIVERED),
        ],
    )  # fmt: skip
    async def test_events_move_the_status_only_forwards(
        self,
        storage: Storage,
        events: MessageEventRepository,
        types: list[tuple[EventType, Bounce | None]],
        expected: MessageStatus,
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)
        for i, (type_, bounce) in enumerate(types):
            await events.apply(an_event(message, type_, bounce=bounce, at=moment(i)), NOW)

        assert await status_of(storage, message) is expected
        assert len(await events.list(account, message.message_id)) == len(types)

    async def test_an_event_that_moves_nothing_leaves_updated_at(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)

        await events.apply(an_event(message, EventType.OPENED), NOW)

        assert await storage.messages.get(account, message.message_id) == message

    async def test_a_delivery_and_a_bounce_at_once_end_bounced(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        messages = [await a_sent_message(storage, account) for _ in range(4)]

        await asyncio.gather(
            *(
                events.apply(an_event(m, type_, bounce=bounce), NOW)
                for m in messages
                for type_, bounce in [
                    (EventType.DELIVERED, None),
                    (EventType.BOUNCED, Bounce.HARD),
                    (EventType.DELIVERED, None),
                ]
            )
        )

        assert [await status_of(storage, m) for m in messages] == [MessageStatus.BOUNCED] * 4


class TestFindMessage:
    async def test_found_by_the_id_its_provider_gave(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account, "postmark")

        assert message.provider_message_id is not None
        assert await events.find_message("postmark", message.provider_message_id) == message

    async def test_an_id_stored_in_angle_brackets_is_found_without_them(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        key = f"20260302093015.{secrets.token_hex(8)}@mg.example.com"
        message = await a_sent_message(storage, account, "mailgun", f"<{key}>")

        assert await events.find_message("mailgun", key) == message

    async def test_another_providers_id_and_an_unknown_id_find_nothing(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account, "resend")
        assert message.provider_message_id is not None

        assert await events.find_message("sendgrid", message.provider_message_id) is None
        assert await events.find_message("resend", f"pm-{secrets.token_hex(8)}") is None

    async def test_found_whatever_its_account(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        first, second = await storage.new_account(), await storage.new_account()
        theirs = await a_sent_message(storage, second, "resend")
        await a_sent_message(storage, first, "resend")
        assert theirs.provider_message_id is not None

        found = await events.find_message("resend", theirs.provider_message_id)

        assert found is not None
        assert found.account_id == second


class TestList:
    async def test_oldest_first_and_in_the_order_stored_within_a_moment(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        account = await storage.new_account()
        message = await a_sent_message(storage, account)
        late = an_event(message, EventType.OPENED, at=moment(5_000))
        first = an_event(message, EventType.DELIVERED, at=moment(1_000))
        tie_a = an_event(message, EventType.CLICKED, at=moment(3_000), detail="a")
        tie_b = an_event(message, EventType.CLICKED, at=moment(3_000), detail="b")
        for event in (late, tie_a, first, tie_b):
            await events.apply(event, NOW)

        assert await events.list(account, message.message_id) == [first, tie_a, tie_b, late]

    async def test_only_the_messages_own_and_only_in_its_account(
        self, storage: Storage, events: MessageEventRepository
    ) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        message = await a_sent_message(storage, mine)
        other = await a_sent_message(storage, mine)
        event = an_event(message)
        await events.apply(event, NOW)
        await events.apply(an_event(other), NOW)

        assert await events.list(mine, message.message_id) == [event]
        assert await events.list(theirs, message.message_id) == []
        assert await events.list(mine, (await a_sent_message(storage, mine)).message_id) == []
