"""The SenderDomainRepository contract (ports/sender_domains.py), run against every adapter."""

from __future__ import annotations

import asyncio

from leadmail.domain.sender_domains import SenderDomain
from tests.contract.support import T0, Storage, is_utc, moment


class TestSenderDomainRepositoryContract:
    async def test_a_new_domain_is_added_and_listed(self, storage: Storage) -> None:
        account = await storage.new_account()

        added = await storage.sender_domains.add(account, "school.example", T0)

        assert added == (SenderDomain(account, "school.example", T0), True)
        [listed] = await storage.sender_domains.list(account)
        assert listed == SenderDomain(account, "school.example", T0)
        assert is_utc(listed.created_at)

    async def test_adding_a_domain_the_account_has_changes_nothing(self, storage: Storage) -> None:
        account = await storage.new_account()
        await storage.sender_domains.add(account, "school.example", moment(0))

        again = await storage.sender_domains.add(account, "school.example", moment(5_000))

        # The first one, with its first time, and not added.
        assert again == (SenderDomain(account, "school.example", moment(0)), False)
        assert await storage.sender_domains.list(account) == [again[0]]

    async def test_adds_of_one_domain_at_once_store_it_once(self, storage: Storage) -> None:
        # Two `leadmail accounts senders add` runs at the same time.
        account = await storage.new_account()

        results = await asyncio.gather(
            *(storage.sender_domains.add(account, "school.example", moment(i)) for i in range(5))
        )

        assert [added for _, added in results].count(True) == 1
        assert len({domain for domain, _ in results}) == 1
        assert len(await storage.sender_domains.list(account)) == 1

    async def test_domains_are_listed_by_domain_whatever_the_database_collation(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        for i, name in enumerate(["ab.example", "bücher.example", "a.example", "a-b.example"]):
            await storage.sender_domains.add(account, name, moment(i))

        listed = await storage.sender_domains.list(account)

        # By code point: '-' before '.' before letters (a collation may ignore both marks).
        assert [d.domain for d in listed] == [
            "a-b.example",
            "a.example",
            "ab.example",
            "bücher.example",
        ]

    async def test_each_account_has_its_own_domains(self, storage: Storage) -> None:
        one, two = await storage.new_account(), await storage.new_account()
        await storage.sender_domains.add(one, "one.example", T0)
        await storage.sender_domains.add(one, "shared.example", T0)

        shared = await storage.sender_domains.add(two, "shared.example", moment(1))

        assert shared == (SenderDomain(two, "shared.example", moment(1)), True)
        assert [d.domain for d in await storage.sender_domains.list(one)] == [
            "one.example",
            "shared.example",
        ]
        assert await storage.sender_domains.list(two) == [shared[0]]

    async def test_an_account_with_none_lists_none(self, storage: Storage) -> None:
        assert await storage.sender_domains.list(await storage.new_account()) == []
        assert await storage.sender_domains.list("acc_never_made") == []

    async def test_remove_says_whether_the_account_had_it(self, storage: Storage) -> None:
        one, two = await storage.new_account(), await storage.new_account()
        await storage.sender_domains.add(one, "school.example", T0)
        await storage.sender_domains.add(one, "office.example", T0)
        await storage.sender_domains.add(two, "school.example", T0)

        assert await storage.sender_domains.remove(one, "school.example") is True
        assert await storage.sender_domains.remove(one, "school.example") is False
        assert await storage.sender_domains.remove(one, "never.example") is False

        assert [d.domain for d in await storage.sender_domains.list(one)] == ["office.example"]
        # The other account's domain of that name stays.
        assert [d.domain for d in await storage.sender_domains.list(two)] == ["school.example"]

    async def test_a_removed_domain_can_be_added_again_as_new(self, storage: Storage) -> None:
        account = await storage.new_account()
        await storage.sender_domains.add(account, "school.example", moment(0))
        await storage.sender_domains.remove(account, "school.example")

        again = await storage.sender_domains.add(account, "school.example", moment(9))

        assert again == (SenderDomain(account, "school.example", moment(9)), True)
