"""The QuotaRepository contract (ports/quotas.py), run against every adapter: an account's
quota, and the day's count taken in one step, never past the quota."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from tests.contract.support import Storage

TODAY = date(2026, 3, 3)
TOMORROW = date(2026, 3, 4)


class TestQuotaRepositoryContract:
    async def test_an_account_has_no_quota_until_one_is_set(self, storage: Storage) -> None:
        account = await storage.new_account()

        assert await storage.quotas.quota(account) == 0
        assert await storage.quotas.set_quota(account, 500)
        assert await storage.quotas.quota(account) == 500
        assert await storage.quotas.set_quota(account, 0)
        assert await storage.quotas.quota(account) == 0

    async def test_places_are_taken_up_to_the_quota_and_no_further(self, storage: Storage) -> None:
        account = await storage.new_account()
        quotas = storage.quotas

        assert await quotas.take(account, TODAY, 3, 5) == 3
        assert await quotas.take(account, TODAY, 3, 5) is None  # would make 6: none taken
        assert await quotas.take(account, TODAY, 2, 5) == 5
        assert await quotas.take(account, TODAY, 1, 5) is None
        assert await quotas.sent(account, TODAY) == 5
        # More than the quota at once, on a day with nothing counted yet.
        assert await quotas.take(account, TOMORROW, 6, 5) is None
        assert await quotas.sent(account, TOMORROW) == 0

    async def test_each_day_and_account_counts_apart(self, storage: Storage) -> None:
        one, two = await storage.new_account(), await storage.new_account()

        assert await storage.quotas.take(one, TODAY, 5, 5) == 5
        assert await storage.quotas.take(one, TOMORROW, 5, 5) == 5
        assert await storage.quotas.take(two, TODAY, 5, 5) == 5

    async def test_places_given_back_are_free_again_never_below_zero(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        quotas = storage.quotas
        await quotas.take(account, TODAY, 5, 5)

        await quotas.give_back(account, TODAY, 2)

        assert await quotas.sent(account, TODAY) == 3
        assert await quotas.take(account, TODAY, 2, 5) == 5
        await quotas.give_back(account, TODAY, 50)
        assert await quotas.sent(account, TODAY) == 0
        await quotas.give_back(account, TOMORROW, 1)  # nothing counted that day: no error
        assert await quotas.sent(account, TOMORROW) == 0

    async def test_takers_at_once_never_pass_the_quota(self, storage: Storage) -> None:
        account = await storage.new_account()

        taken = await asyncio.gather(
            *(storage.quotas.take(account, TODAY, 1, 7) for _ in range(20))
        )

        assert sum(1 for t in taken if t is not None) == 7
        assert sorted(t for t in taken if t is not None) == list(range(1, 8))
        assert await storage.quotas.sent(account, TODAY) == 7


@pytest.mark.postgres
async def test_a_quota_for_no_such_account_is_not_set(postgres_storage: Storage) -> None:
    # (The memory store keeps no accounts: it sets whatever it is asked.)
    assert not await postgres_storage.quotas.set_quota("acc_nobody_here", 5)
