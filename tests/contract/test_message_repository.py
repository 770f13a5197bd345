"""The MessageRepository contract (ports/messages.py), run against every adapter."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.domain.email import MessageStatus, new_message_id
from leadmail.ports.errors import PortError
from tests.contract.support import Storage, a_message, is_utc, moment


class TestMessageRepositoryContract:
    # --- add and get ---------------------------------------------------------------------

    async def test_add_then_get_preserves_every_field(self, storage: Storage) -> None:
        account = await storage.new_account()
        record = dataclasses.replace(
            a_message(
                account,
                to=('"Zoë O\'Brien" <zoe@example.com>', "bob@example.org"),
                subject="Hi — ✓ 'quoted' \"double\" \\ %_",
                template_id="welcome",
            ),
            updated_at=datetime(2026, 11, 23, 8, 0, 0, tzinfo=UTC),  # whole second
        )

        await storage.messages.add([record])
        fetched = await storage.messages.get(account, record.message_id)

        assert fetched == record
        assert fetched is not None
        assert isinstance(fetched.status, MessageStatus)
        assert is_utc(fetched.created_at)
        assert is_utc(fetched.updated_at)
        assert fetched.created_at.isoformat() == "2026-11-22T10:15:30.123000+00:00"
        assert fetched.updated_at.isoformat() == "2026-11-23T08:00:00+00:00"

    async def test_a_message_without_template_keeps_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        record = a_message(account, template_id=None)

        await storage.messages.add([record])

        fetched = await storage.messages.get(account, record.message_id)
        assert fetched is not None
        assert fetched.template_id is None
        assert fetched.provider_message_id is None

    async def test_a_subject_of_the_longest_allowed_length_fits(self, storage: Storage) -> None:
        account = await storage.new_account()
        record = a_message(account, subject="s" * 998, to=tuple(f"r{i}@ex.com" for i in range(50)))

        await storage.messages.add([record])

        assert await storage.messages.get(account, record.message_id) == record

    async def test_get_of_an_unknown_message_is_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        await storage.messages.add([a_message(account)])

        assert await storage.messages.get(account, new_message_id()) is None

    async def test_another_accounts_message_is_not_found(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        record = a_message(theirs)
        await storage.messages.add([record])

        assert await storage.messages.get(mine, record.message_id) is None
        assert await storage.messages.get(theirs, record.message_id) == record

    # --- all or none ---------------------------------------------------------------------

    async def test_add_stores_a_whole_batch(self, storage: Storage) -> None:
        account = await storage.new_account()
        batch = [a_message(account, to=(f"r{i}@example.com",)) for i in range(50)]

        await storage.messages.add(batch)

        ids = [r.message_id for r in batch]
        assert await storage.messages.get_many(account, ids) == batch

    async def test_a_batch_repeating_a_message_id_stores_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        first, second = a_message(account), a_message(account)
        repeat = dataclasses.replace(first, subject="Another subject")

        with pytest.raises(PortError):
            await storage.messages.add([first, second, repeat])

        assert await storage.messages.get(account, first.message_id) is None
        assert await storage.messages.get(account, second.message_id) is None

    async def test_a_batch_with_a_stored_message_id_stores_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        old = a_message(account)
        await storage.messages.add([old])
        fresh = a_message(account)
        clash = dataclasses.replace(old, subject="Overwritten?")

        with pytest.raises(PortError):
            await storage.messages.add([fresh, clash])

        assert await storage.messages.get(account, fresh.message_id) is None
        assert await storage.messages.get(account, old.message_id) == old

    async def test_adding_nothing_is_a_no_op(self, storage: Storage) -> None:
        account = await storage.new_account()
        record = a_message(account)
        await storage.messages.add([record])

        await storage.messages.add([])
        await storage.messages.update([])

        assert await storage.messages.get_many(account, [record.message_id]) == [record]

    # --- update --------------------------------------------------------------------------

    async def test_update_stores_the_delivery_fields_only(self, storage: Storage) -> None:
        account = await storage.new_account()
        record = a_message(account, template_id="welcome")
        await storage.messages.add([record])
        changed = dataclasses.replace(
            record,
            status=MessageStatus.SENT,
            attempts=2,
            provider_message_id="re_0f3c-provider-id",
            last_error="",
            updated_at=moment(1500),
            # Not delivery fields: an update must not change them.
            subject="A new subject",
            to=("someone-else@example.com",),
            sender="other@example.com",
            template_id=None,
            provider="resend",
            created_at=moment(9000),
        )

        await storage.messages.update([changed])

        assert await storage.messages.get(account, record.message_id) == dataclasses.replace(
            record,
            status=MessageStatus.SENT,
            attempts=2,
            provider_message_id="re_0f3c-provider-id",
            updated_at=moment(1500),
        )

    async def test_update_records_a_failure_and_several_at_once(self, storage: Storage) -> None:
        account = await storage.new_account()
        one, two, three = (a_message(account) for _ in range(3))
        await storage.messages.add([one, two, three])
        failed = dataclasses.replace(
            one,
            status=MessageStatus.FAILED,
            attempts=4,
            last_error="The email provider is unavailable: 503 — try later",
            updated_at=moment(20_000),
        )
        sent = dataclasses.replace(
            three, status=MessageStatus.SENT, attempts=1, provider_message_id="pm-1"
        )

        await storage.messages.update([failed, sent])

        ids = [one.message_id, two.message_id, three.message_id]
        assert await storage.messages.get_many(account, ids) == [failed, two, sent]

    async def test_update_does_not_reach_into_another_account(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        record = a_message(theirs)
        await storage.messages.add([record])
        forged = dataclasses.replace(record, account_id=mine, status=MessageStatus.SENT, attempts=1)

        await storage.messages.update([forged])
        mine_too = a_message(mine)
        await storage.messages.add([mine_too])
        sent = dataclasses.replace(mine_too, status=MessageStatus.SENT, attempts=1)
        await storage.messages.update([forged, sent])  # several at once: the same rule

        assert await storage.messages.get(theirs, record.message_id) == record
        assert await storage.messages.get(mine, mine_too.message_id) == sent

    async def test_several_updated_at_once_keep_their_moments_to_the_microsecond(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        batch = [a_message(account) for _ in range(3)]
        await storage.messages.add(batch)
        moments = [
            moment(2_000).replace(microsecond=0),
            moment(2_001),
            moment(2_000) + timedelta(microseconds=7),
        ]
        changed = [
            dataclasses.replace(m, status=MessageStatus.SENT, attempts=1, updated_at=at)
            for m, at in zip(batch, moments, strict=True)
        ]

        await storage.messages.update(changed)

        stored = await storage.messages.get_many(account, [m.message_id for m in batch])
        assert stored == changed
        assert [m.updated_at for m in stored] == moments

    async def test_update_of_an_unknown_message_stores_nothing(self, storage: Storage) -> None:
        account = await storage.new_account()
        ghost = a_message(account)

        await storage.messages.update([ghost])

        assert await storage.messages.get(account, ghost.message_id) is None

    # --- get_many ------------------------------------------------------------------------

    async def test_get_many_answers_in_the_order_asked(self, storage: Storage) -> None:
        account = await storage.new_account()
        batch = [a_message(account, created_at=moment(i)) for i in range(5)]
        await storage.messages.add(batch)
        order = [batch[3], batch[0], batch[4], batch[1]]

        found = await storage.messages.get_many(account, [r.message_id for r in order])

        assert found == order

    async def test_get_many_skips_unknown_ids_and_other_accounts(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        a, b = a_message(mine), a_message(mine)
        foreign = a_message(theirs)
        await storage.messages.add([a, b])
        await storage.messages.add([foreign])

        found = await storage.messages.get_many(
            mine, [foreign.message_id, b.message_id, new_message_id(), a.message_id]
        )

        assert found == [b, a]

    async def test_get_many_of_no_ids_is_empty(self, storage: Storage) -> None:
        account = await storage.new_account()
        await storage.messages.add([a_message(account)])

        assert await storage.messages.get_many(account, []) == []
