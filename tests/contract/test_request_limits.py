"""The request budgets (ports/request_limits.py) on each storage: this process's memory and
Redis. A budget is counted per bucket, refuses without counting, says what is left and
when a place frees, and is shared by every limiter on the same Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from leadmail.adapters.limits.requests import request_limiter_from
from leadmail.ports.rate_limits import LimiterUnavailable
from leadmail.ports.request_limits import RequestLimiter
from tests.redis_server import keys_deleted, new_prefix

BUDGET = 3


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def budget(request: pytest.FixtureRequest) -> AsyncIterator[RequestLimiter]:
    """BUDGET requests a minute per bucket."""
    if request.param == "memory":
        limiter = request_limiter_from("", BUDGET, "key")
        assert limiter is not None
        yield limiter
        return
    url: str = request.getfixturevalue("redis_url")
    prefix = new_prefix()
    async with keys_deleted(url, prefix):
        limiter = request_limiter_from(url, BUDGET, "key", key_prefix=prefix)
        assert limiter is not None
        try:
            yield limiter
        finally:
            await limiter.close()


async def test_a_budget_takes_its_amount_then_refuses(budget: RequestLimiter) -> None:
    seen = [await budget.hit("key:a") for _ in range(BUDGET + 2)]

    assert [a.allowed for a in seen] == [True] * BUDGET + [False, False]
    assert [a.remaining for a in seen] == [2, 1, 0, 0, 0]
    assert {a.limit for a in seen} == {BUDGET}
    # A refused request waits for a place: within the minute, never now.
    assert all(0 < a.reset_after <= 60 for a in seen[BUDGET:])


async def test_each_bucket_has_its_own_budget(budget: RequestLimiter) -> None:
    for _ in range(BUDGET):
        assert (await budget.hit("key:a")).allowed

    other = await budget.hit("key:b")

    assert other.allowed
    assert other.remaining == BUDGET - 1
    assert not (await budget.hit("key:a")).allowed


async def test_a_peek_counts_nothing_and_says_whether_one_more_fits(
    budget: RequestLimiter,
) -> None:
    assert (await budget.peek("key:a")).allowed
    for _ in range(BUDGET):
        before = await budget.peek("key:a")
        assert before.allowed
        assert (await budget.hit("key:a")).remaining == before.remaining - 1

    full = await budget.peek("key:a")

    assert not full.allowed
    assert full.remaining == 0
    assert 0 < full.reset_after <= 60
    assert (await budget.peek("key:b")).remaining == BUDGET  # another bucket untouched


async def test_headers_say_the_budget() -> None:
    limiter = request_limiter_from("", 10, "key")
    assert limiter is not None

    allowance = await limiter.hit("key:h")

    headers = dict(allowance.headers())
    assert headers["ratelimit-limit"] == "10"
    assert headers["ratelimit-remaining"] == "9"
    assert 0 <= int(headers["ratelimit-reset"]) <= 60  # whole seconds, rounded up


def test_no_budget_is_no_limiter() -> None:
    assert request_limiter_from("", 0, "key") is None


@pytest.mark.redis
async def test_limiters_on_one_redis_share_a_bucket(redis_url: str) -> None:
    prefix = new_prefix()
    async with keys_deleted(redis_url, prefix):
        one = request_limiter_from(redis_url, BUDGET, "key", key_prefix=prefix)
        two = request_limiter_from(redis_url, BUDGET, "key", key_prefix=prefix)
        assert one is not None
        assert two is not None
        try:
            seen = [await (one if n % 2 else two).hit("key:shared") for n in range(BUDGET + 1)]
        finally:
            await one.close()
            await two.close()

    assert [a.allowed for a in seen] == [True] * BUDGET + [False]


async def test_an_unreachable_redis_is_limiter_unavailable() -> None:
    limiter = request_limiter_from("redis://127.0.0.1:1/0", BUDGET, "key")
    assert limiter is not None
    try:
        with pytest.raises(LimiterUnavailable, match="request limiter"):
            await limiter.hit("key:a")
    finally:
        await limiter.close()
