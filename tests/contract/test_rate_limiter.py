"""The RateLimiter contract (ports/rate_limits.py) on its real storages, in real time: the
`limits` package's moving windows in this process's memory, and in the machine's Redis.

"Workers" are limiter instances: on Redis each has its own connection pool, as separate
processes would, and they share the counts and holds through Redis; in memory, tasks of
one process share its one limiter. A request's moment is when acquire() returned; the
windows checked are 0.9 s rather than 1 s so that a return delayed on a busy machine
cannot fail a test, while a limiter that let a burst through still would.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

import pytest
import redis.asyncio

from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.storage import rate_limiter_from
from leadmail.ports.rate_limits import LimiterUnavailable
from tests.redis_server import keys_deleted, new_prefix

LANE = "email:resend"
SLACK = 0.1  # how late acquire() may return on a busy machine, inside a window
LATE = 0.5  # how late a wait may end on a busy machine (a bound on slowness only)
NO_WAIT = 0.5  # a call that had not to wait (waiting is for a window: 1 s or more)


@dataclass
class Storage:
    """Makes the limiters ("workers") of one test, all on one storage."""

    kind: str
    make: Callable[[Mapping[str, float]], LaneLimiter]
    client: redis.asyncio.Redis | None = None  # the test's own look into Redis
    prefix: str = ""
    made: list[LaneLimiter] = field(default_factory=list)
    _shared: LaneLimiter | None = None

    def worker(self, rates: Mapping[str, float]) -> LaneLimiter:
        """A limiter of ``rates``; in memory every worker of a test is the one limiter."""
        if self.kind == "memory" and self._shared is not None:
            return self._shared
        limiter = self.make(rates)
        self.made.append(limiter)
        self._shared = limiter
        return limiter


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def storage(request: pytest.FixtureRequest) -> AsyncIterator[Storage]:
    if request.param == "memory":
        subject = Storage("memory", lambda rates: rate_limiter_from("", rates))
        yield subject
    else:
        url: str = request.getfixturevalue("redis_url")
        prefix = new_prefix()
        async with keys_deleted(url, prefix) as client:
            subject = Storage(
                "redis", lambda rates: rate_limiter_from(url, rates, key_prefix=prefix)
            )
            subject.client, subject.prefix = client, prefix
            yield subject
    for limiter in subject.made:
        await limiter.close()


async def acquisitions(workers: list[LaneLimiter], count: int, lane: str = LANE) -> list[float]:
    """``count`` acquire() calls shared out among the workers, all at once; the moments
    (from the start) they returned, sorted."""
    start = time.monotonic()
    moments: list[float] = []

    async def one(worker: LaneLimiter) -> None:
        await worker.acquire(lane)
        moments.append(time.monotonic() - start)

    await asyncio.gather(*(one(workers[i % len(workers)]) for i in range(count)))
    return sorted(moments)


def most_in_any(moments: list[float], seconds: float) -> int:
    """The most moments in any window of ``seconds``."""
    return max(
        sum(1 for later in moments[i:] if later - first < seconds)
        for i, first in enumerate(moments)
    )


async def test_an_unlimited_lane_never_waits_and_counts_nothing(storage: Storage) -> None:
    worker = storage.worker({LANE: 0.0})

    moments = await acquisitions([worker], 200)

    assert moments[-1] < 1.0  # 2 a second would take 100 s; one round trip each on Redis
    if storage.client is not None:
        assert [key async for key in storage.client.scan_iter(match=f"{storage.prefix}:*")] == []


@pytest.mark.parametrize("workers", [1, 3])
async def test_no_second_ever_holds_more_than_the_rate(storage: Storage, workers: int) -> None:
    # Three workers at once: on Redis three limiters, together never above the rate.
    team = [storage.worker({LANE: 4.0}) for _ in range(workers)]

    moments = await acquisitions(team, 10)

    assert most_in_any(moments, 1 - SLACK) <= 4
    assert moments[3] < NO_WAIT  # no wait while it fits
    assert 2.0 - SLACK / 2 <= moments[-1] < 2.0 + LATE  # 4 now, 4 at 1 s, 2 at 2 s


async def test_a_fractional_rate_spaces_the_requests(storage: Storage) -> None:
    worker = storage.worker({LANE: 0.5})

    moments = await acquisitions([worker], 2)

    assert moments[0] < NO_WAIT
    assert 2.0 - SLACK / 2 <= moments[1] - moments[0] < 2.0 + LATE


async def test_a_rate_that_is_not_whole_holds_over_two_seconds_without_a_burst(
    storage: Storage,
) -> None:
    team = [storage.worker({LANE: 2.5}) for _ in range(2)]

    moments = await acquisitions(team, 6)

    assert most_in_any(moments, 1 - SLACK) <= 3  # 2.5 rounded up, in any one second
    assert most_in_any(moments, 2 - SLACK) <= 5  # 2.5 x 2, in any two
    assert moments[-1] < 2.0 + LATE


async def test_a_cost_counts_that_many_requests(storage: Storage) -> None:
    worker = storage.worker({LANE: 4.0})
    start = time.monotonic()

    await worker.acquire(LANE, cost=3)
    assert time.monotonic() - start < NO_WAIT
    await worker.acquire(LANE, cost=2)  # 3 + 2 > 4: the next second

    assert 1.0 - SLACK / 2 <= time.monotonic() - start < 1.0 + LATE
    with pytest.raises(ValueError, match="5 requests never fit"):
        await worker.acquire(LANE, cost=5)


async def test_lanes_are_counted_apart(storage: Storage) -> None:
    worker = storage.worker({LANE: 2.0, "email:postmark": 2.0})
    await acquisitions([worker], 2)  # the lane is full for a second

    moments = await acquisitions([worker], 2, lane="email:postmark")

    assert moments[-1] < NO_WAIT


async def test_a_hold_from_one_worker_is_obeyed_by_another(storage: Storage) -> None:
    first, second = storage.worker({LANE: 0.0}), storage.worker({LANE: 0.0})
    start = time.monotonic()

    await first.hold(LANE, 0.6)
    await second.acquire(LANE)

    assert 0.6 - SLACK / 2 <= time.monotonic() - start < 0.6 + LATE


async def test_unheld_waits_out_a_hold_and_counts_nothing(storage: Storage) -> None:
    first, second = storage.worker({LANE: 2.0}), storage.worker({LANE: 2.0})
    await second.unheld(LANE)  # no hold: at once
    start = time.monotonic()
    await first.hold(LANE, 0.5)

    await second.unheld(LANE)

    assert 0.5 - SLACK / 2 <= time.monotonic() - start < 0.5 + LATE
    moments = await acquisitions([first, second], 2)  # both places still free
    assert moments[-1] < NO_WAIT


async def test_a_shorter_hold_never_shortens_a_longer_one(storage: Storage) -> None:
    first, second = storage.worker({LANE: 2.0}), storage.worker({LANE: 2.0})
    start = time.monotonic()

    await first.hold(LANE, 0.8)
    await second.hold(LANE, 0.1)
    await acquisitions([first, second], 2)

    assert time.monotonic() - start >= 0.8 - SLACK / 2
    await first.hold(LANE, 0.3)  # a longer one after it has passed holds again
    hold_start = time.monotonic()
    await second.acquire(LANE)
    assert time.monotonic() - hold_start >= 0.3 - SLACK


async def test_a_hold_on_one_lane_leaves_the_others_alone(storage: Storage) -> None:
    worker = storage.worker({LANE: 2.0})
    await worker.hold("email:postmark", 30.0)

    moments = await acquisitions([worker], 2)

    assert moments[-1] < NO_WAIT


@pytest.mark.redis
async def test_redis_keys_are_the_prefixes_and_all_expire(redis_url: str) -> None:
    # Two services on one Redis, told apart by their prefixes: each gets the whole rate.
    prefixes = [new_prefix(), new_prefix()]
    async with keys_deleted(redis_url, prefixes[0]) as client, keys_deleted(redis_url, prefixes[1]):
        services = [rate_limiter_from(redis_url, {LANE: 3.0}, key_prefix=p) for p in prefixes]
        try:
            for service in services:
                moments = await acquisitions([service], 3)
                assert moments[-1] < NO_WAIT
                await service.hold(LANE, 5.0)
                await service.hold(LANE, 1.0)
            for prefix in prefixes:
                keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
                assert len(keys) == 2  # the lane's moving window and its hold
                ttls = {
                    "hold" if b":hold:" in key else "window": await client.pttl(key) for key in keys
                }
                assert 4000 < ttls["hold"] <= 5000  # 5 s, not shortened by the 1 s hold
                assert 0 < ttls["window"] <= 1000  # the window's entries: one second
        finally:
            for service in services:
                await service.close()


async def test_a_redis_that_does_not_answer_is_the_limiters_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    limiter = rate_limiter_from(f"redis://:hunter2@127.0.0.1:{port}/0", {LANE: 2.0})
    try:
        with pytest.raises(LimiterUnavailable) as caught:
            await limiter.acquire(LANE)
        with pytest.raises(LimiterUnavailable):
            await limiter.hold(LANE, 1.0)
    finally:
        await limiter.close()

    assert "hunter2" not in str(caught.value)
