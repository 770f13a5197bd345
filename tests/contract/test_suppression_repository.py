"""The SuppressionRepository contract (ports/suppressions.py), run against every adapter."""

from __future__ import annotations

import asyncio

import pytest

from leadmail.domain.suppressions import (
    Added,
    Suppression,
    SuppressionCheck,
    SuppressionReason,
    address_digest,
    suppression_address,
)
from tests.contract.support import Storage, a_message, is_utc, moment

R = SuppressionReason


def entry(account: str, raw: str, reason: R = R.MANUAL, at: int = 0, **origin: str) -> Suppression:
    return Suppression.of(account, suppression_address(raw), reason, moment(at), **origin)


class TestSuppressionRepositoryContract:
    async def test_an_entry_is_stored_as_given_and_found_by_its_digest(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        ada = entry(account, "Ada <Ada@Example.COM>", R.BOUNCED, message_id="msg_1")

        assert await storage.suppressions.add(ada) == Added(ada, written=True)

        assert ada.email == "ada@example.com"
        stored = await storage.suppressions.get(account, address_digest("ada@example.com"))
        assert stored == ada
        assert stored is not None
        assert is_utc(stored.created_at)
        other = address_digest("bob@example.com")
        assert await storage.suppressions.find(account, [ada.digest, other, ada.digest]) == [ada]
        assert await storage.suppressions.find(account, []) == []

    async def test_another_accounts_entries_are_never_seen(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        ada = entry(mine, "ada@example.com")
        await storage.suppressions.add(ada)

        assert await storage.suppressions.find(theirs, [ada.digest]) == []
        assert await storage.suppressions.get(theirs, ada.digest) is None
        assert await storage.suppressions.list(theirs, 10) == []
        assert not await storage.suppressions.remove(theirs, ada.digest)
        assert await storage.suppressions.erase(theirs, ada.digest) == 0
        assert await storage.suppressions.get(mine, ada.digest) == ada

    @pytest.mark.parametrize(
        ("first", "then", "kept"),
        [
            (R.MANUAL, R.BOUNCED, R.BOUNCED),
            (R.UNSUBSCRIBED, R.COMPLAINED, R.COMPLAINED),
            (R.BOUNCED, R.MANUAL, R.BOUNCED),
            (R.BOUNCED, R.COMPLAINED, R.BOUNCED),
            (R.MANUAL, R.UNSUBSCRIBED, R.MANUAL),
        ],
    )
    async def test_one_entry_per_address_replaced_only_by_a_reason_that_outranks_it(
        self, storage: Storage, first: R, then: R, kept: R
    ) -> None:
        account = await storage.new_account()
        await storage.suppressions.add(entry(account, "ada@example.com", first, at=1))

        added = await storage.suppressions.add(entry(account, "ADA@example.com", then, at=2))

        held = added.entry
        assert held.reason is kept
        assert held.created_at == moment(1 if kept is first else 2)
        assert added.written is (kept is then)
        assert [e.reason for e in await storage.suppressions.list(account, 10)] == [kept]

    async def test_an_add_equal_to_the_stored_entry_says_it_wrote_nothing(
        self, storage: Storage
    ) -> None:
        # The same address, reason and moment (two adds in one millisecond) is no new entry.
        account = await storage.new_account()
        ada = entry(account, "ada@example.com")

        first, again = await storage.suppressions.add(ada), await storage.suppressions.add(ada)

        assert first == Added(ada, written=True)
        assert again == Added(ada, written=False)

    async def test_adds_at_once_for_one_address_leave_one_entry(self, storage: Storage) -> None:
        account = await storage.new_account()
        reasons = [R.MANUAL, R.BOUNCED, R.UNSUBSCRIBED, R.COMPLAINED] * 3

        await asyncio.gather(
            *(storage.suppressions.add(entry(account, "ada@example.com", r)) for r in reasons)
        )

        [held] = await storage.suppressions.list(account, 10)
        assert held.reason.binding

    async def test_adds_racing_removes_each_answer_the_entry(self, storage: Storage) -> None:
        # An add reads the stored entry back when it does not replace it: a removal between
        # the two is no failure (a webhook's bounce beside a client's DELETE).
        account = await storage.new_account()
        ada = entry(account, "ada@example.com", R.BOUNCED)
        await storage.suppressions.add(ada)

        answers = await asyncio.gather(
            *(
                storage.suppressions.add(ada)
                if n % 2
                else storage.suppressions.remove(account, ada.digest)
                for n in range(40)
            )
        )

        adds = answers[1::2]
        assert adds == [Added(ada, written=a.written) for a in adds if isinstance(a, Added)]
        assert len(adds) == 20
        assert await storage.suppressions.list(account, 10) in ([], [ada])

    async def test_the_list_is_newest_first_a_page_at_a_time_by_reason(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        made = [
            entry(account, f"l{n}@example.com", R.BOUNCED if n % 2 else R.MANUAL, at=n // 2)
            for n in range(7)
        ]
        for suppression in made:
            await storage.suppressions.add(suppression)
        newest_first = sorted(made, key=lambda e: (e.created_at, e.digest), reverse=True)

        first = await storage.suppressions.list(account, 3)
        assert first == newest_first[:4]  # limit + 1: there is more
        last = first[2]
        rest = await storage.suppressions.list(account, 10, (last.created_at, last.digest))
        assert rest == newest_first[3:]
        bounced = await storage.suppressions.list(account, 10, reason=R.BOUNCED)
        assert bounced == [e for e in newest_first if e.reason is R.BOUNCED]

    async def test_remove_deletes_the_entry_once(self, storage: Storage) -> None:
        account = await storage.new_account()
        ada = entry(account, "ada@example.com")
        await storage.suppressions.add(ada)

        assert await storage.suppressions.remove(account, ada.digest)
        assert not await storage.suppressions.remove(account, ada.digest)
        assert await storage.suppressions.find(account, [ada.digest]) == []

    async def test_an_erased_entry_keeps_suppressing_without_its_address(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        ada = entry(account, "ada@example.com", R.UNSUBSCRIBED, campaign_id="cmp_1")
        await storage.suppressions.add(ada)

        assert await storage.suppressions.erase(account, ada.digest) == 1
        assert await storage.suppressions.erase(account, ada.digest) == 0

        [found] = await storage.suppressions.find(account, [address_digest("ada@example.com")])
        assert found == ada.erased()
        assert found.email == found.digest != "ada@example.com"
        assert (found.reason, found.campaign_id) == (R.UNSUBSCRIBED, "cmp_1")


def check_for(account: str, *addresses: str, transactional: bool = False) -> SuppressionCheck:
    digests = tuple(address_digest(suppression_address(a)) for a in addresses)
    return SuppressionCheck(account, digests, transactional)


class TestMessagesStoredUnlessSuppressed:
    """MessageRepository.add_unless_suppressed: the record and the check in one step."""

    @pytest.mark.parametrize("count", [1, 3])
    async def test_messages_to_addresses_not_on_the_list_are_stored(
        self, storage: Storage, count: int
    ) -> None:
        account = await storage.new_account()
        await storage.suppressions.add(entry(account, "zed@example.com"))
        made = [a_message(account, to=(f"l{n}@example.com",)) for n in range(count)]

        barred = await storage.messages.add_unless_suppressed(
            made, check_for(account, *(m.to[0] for m in made))
        )

        assert barred == []
        ids = [m.message_id for m in made]
        assert await storage.messages.get_many(account, ids) == made

    @pytest.mark.parametrize("count", [1, 3])
    async def test_nothing_is_stored_when_one_address_is_on_the_list(
        self, storage: Storage, count: int
    ) -> None:
        account = await storage.new_account()
        grace = entry(account, "Grace@Example.com", R.BOUNCED)
        await storage.suppressions.add(grace)
        await storage.suppressions.add(entry(account, "other@example.com"))
        made = [a_message(account, to=(f"l{n}@example.com",)) for n in range(count - 1)]
        made.append(a_message(account, to=("grace@example.com",)))

        barred = await storage.messages.add_unless_suppressed(
            made, check_for(account, *(m.to[0] for m in made))
        )

        assert barred == [grace]
        assert await storage.messages.get_many(account, [m.message_id for m in made]) == []

    @pytest.mark.parametrize(("reason", "stored"), [(R.UNSUBSCRIBED, True), (R.BOUNCED, False)])
    async def test_a_transactional_check_counts_only_binding_entries(
        self, storage: Storage, reason: R, stored: bool
    ) -> None:
        account = await storage.new_account()
        await storage.suppressions.add(entry(account, "ada@example.com", reason))
        message = a_message(account)

        barred = await storage.messages.add_unless_suppressed(
            [message], check_for(account, "ada@example.com", transactional=True)
        )

        assert (barred == []) is stored
        assert (await storage.messages.get(account, message.message_id) is not None) is stored

    async def test_another_accounts_list_stops_nothing(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        await storage.suppressions.add(entry(theirs, "ada@example.com", R.COMPLAINED))
        message = a_message(mine)

        assert (
            await storage.messages.add_unless_suppressed(
                [message], check_for(mine, "ada@example.com")
            )
            == []
        )
        assert await storage.messages.get(mine, message.message_id) == message
