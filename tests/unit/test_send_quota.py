"""SendQuota: the quota read at most every 10 s, counted per UTC day, given back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.memory.quotas import MemoryQuotaRepository
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.quotas import QuotaExceeded, next_day_start
from leadmail.services.quotas import CACHE_S, SendQuota

ACCOUNT = "acc_quota"


class Clocks:
    def __init__(self) -> None:
        self.wall = datetime(2026, 3, 3, 23, 59, 0, tzinfo=UTC)
        self.mono = 100.0

    def now(self) -> datetime:
        return self.wall

    def monotonic(self) -> float:
        return self.mono


def quota_with(clocks: Clocks) -> tuple[SendQuota, MemoryQuotaRepository]:
    store = MemoryQuotaRepository()
    return SendQuota(store, clocks.now, monotonic=clocks.monotonic), store


async def test_a_change_is_obeyed_within_the_cache_time() -> None:
    clocks = Clocks()
    quota, store = quota_with(clocks)
    await quota.take(ACCOUNT, 5)  # no quota: read (none), nothing counted
    await store.set_quota(ACCOUNT, 1)  # as another process's CLI would

    await quota.take(ACCOUNT, 5)  # still the cached "none"
    clocks.mono += CACHE_S
    await quota.take(ACCOUNT, 1)

    with pytest.raises(QuotaExceeded):
        await quota.take(ACCOUNT, 1)
    assert await store.sent(ACCOUNT, clocks.wall.date()) == 1


async def test_the_count_starts_again_with_the_utc_day() -> None:
    clocks = Clocks()
    quota, _ = quota_with(clocks)
    await quota.set(ACCOUNT, 2)
    await quota.take(ACCOUNT, 2)
    with pytest.raises(QuotaExceeded) as refused:
        await quota.take(ACCOUNT, 1)
    assert refused.value.reset_at == datetime(2026, 3, 4, tzinfo=UTC)
    assert refused.value.retry_after == 60
    assert (await quota.exceeded(ACCOUNT)) is not None

    clocks.wall += timedelta(minutes=1)

    assert await quota.exceeded(ACCOUNT) is None
    await quota.take(ACCOUNT, 2)


async def test_given_back_places_are_taken_again_on_their_own_day() -> None:
    clocks = Clocks()
    quota, store = quota_with(clocks)
    await quota.set(ACCOUNT, 3)
    taken = await quota.take(ACCOUNT, 3)
    clocks.wall += timedelta(minutes=5)  # past midnight: the places were yesterday's

    await quota.give_back(ACCOUNT, taken, 2)

    assert await store.sent(ACCOUNT, taken.day) == 1
    assert (await quota.use(ACCOUNT)).sent == 0


async def test_a_quota_out_of_range_is_refused() -> None:
    quota, _ = quota_with(Clocks())
    with pytest.raises(ValidationFailed):
        await quota.set(ACCOUNT, -1)


def test_the_reset_is_the_next_utc_midnight() -> None:
    assert next_day_start(datetime(2026, 3, 3, 0, 0, tzinfo=UTC)) == datetime(
        2026, 3, 4, tzinfo=UTC
    )
