"""The rate limiter's own logic (adapters/limits/lanes.py) on a fake clock: when it waits,
for how long, and holds. What is counted is scripted here; the `limits` package's moving
windows are held to the rates by the contract tests (tests/contract/test_rate_limiter.py),
here only the spacing of their refusals."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import pytest
from limits.aio.storage import MemoryStorage

from leadmail.adapters.limits.lanes import MIN_WAIT, LaneLimiter, MemoryHolds
from leadmail.adapters.limits.storage import LimitsCounts
from leadmail.domain.pacing import SPACING, Window
from leadmail.ports.rate_limits import Counts, LimiterUnavailable

LANE = "email:resend"


@dataclass
class FakeTime:
    now: float = 100.0
    slept: list[float] = field(default_factory=list)
    on_sleep: Callable[[], Awaitable[None]] | None = None

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            await self.on_sleep()


class ScriptedCounts(Counts):
    """Answers each take() with the next scripted answer (None: counted; a number: not
    counted, the seconds until a place frees); records the asks."""

    def __init__(self, time: FakeTime, *waits: float | None) -> None:
        self._time = time
        self._waits = deque(waits)
        self.asked: list[tuple[float, str, int, tuple[Window, ...]]] = []
        self.error: Exception | None = None

    async def take(self, lane: str, cost: int, windows: Sequence[Window]) -> float | None:
        if self.error is not None:
            raise self.error
        self.asked.append((self._time.now, lane, cost, tuple(windows)))
        return self._waits.popleft() if self._waits else None


def limiter(
    time: FakeTime, counts: Counts, rates: dict[str, float] | None = None, **kwargs: object
) -> LaneLimiter:
    return LaneLimiter(
        counts,
        MemoryHolds(time.monotonic),
        {LANE: 2.0} if rates is None else rates,
        sleep=time.sleep,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_a_lane_with_room_is_counted_at_once() -> None:
    time = FakeTime()
    counts = ScriptedCounts(time)

    await limiter(time, counts).acquire(LANE, cost=2)

    assert counts.asked == [(100.0, LANE, 2, (Window(2, 1),))]
    assert time.slept == []


@pytest.mark.parametrize(("rates", "lane"), [({LANE: 0.0}, LANE), ({}, LANE), ({LANE: 2}, "x")])
async def test_an_unlimited_or_unknown_lane_never_counts_or_waits(
    rates: dict[str, float], lane: str
) -> None:
    time = FakeTime()
    counts = ScriptedCounts(time, 5.0)
    subject = limiter(time, counts, rates)

    for _ in range(1000):
        await subject.acquire(lane)

    assert counts.asked == []
    assert time.slept == []


async def test_a_full_lane_waits_what_the_counts_say_then_tries_again() -> None:
    # The wait the counts give has the spacing in it (below: the `limits` counts').
    time = FakeTime()
    counts = ScriptedCounts(time, 0.4, 0.25, None)

    await limiter(time, counts).acquire(LANE)

    assert time.slept == [0.4, 0.25]
    assert [round(at, 6) for at, *_ in counts.asked] == [100.0, 100.4, 100.65]


@pytest.mark.parametrize("windows", [(Window(1, 1),), (Window(5, 2), Window(3, 1))])
async def test_the_limits_counts_ask_again_the_spacing_after_a_place_frees(
    windows: tuple[Window, ...],
) -> None:
    # Whole-second windows (memory, Redis): a refused request is tried again no sooner
    # than SPACING after the place it takes frees, never the moment it frees.
    counts = LimitsCounts(MemoryStorage())
    amount = min(w.amount for w in windows)
    for _ in range(amount):
        assert await counts.take(LANE, 1, windows) is None

    wait = await counts.take(LANE, 1, windows)

    assert wait is not None
    assert 0.9 < wait - SPACING <= 1.0  # the first grant leaves the 1 s window at 1 s


async def test_a_refusal_whose_place_frees_now_is_no_grant() -> None:
    # Refused, and the window's oldest entry ends now (0 s to wait): nothing was counted,
    # so acquire() must ask again, not return (it did, and two workers at 10/s let up to
    # 15 requests through in one second: bench K4).
    time = FakeTime()
    counts = ScriptedCounts(time, 0.0, 0.0, None)

    await limiter(time, counts).acquire(LANE)

    assert len(counts.asked) == 3
    assert time.slept == [MIN_WAIT, MIN_WAIT]


async def test_a_hold_is_waited_out_whole_before_anything_is_counted() -> None:
    time = FakeTime()
    counts = ScriptedCounts(time)
    subject = limiter(time, counts)
    await subject.hold(LANE, 7.5)
    time.now += 2.0

    await subject.acquire(LANE)

    assert time.slept == [5.5]
    assert counts.asked == [(107.5, LANE, 1, (Window(2, 1),))]


async def test_a_hold_stops_an_unlimited_lane_too() -> None:
    time = FakeTime()
    subject = limiter(time, ScriptedCounts(time), {LANE: 0.0})
    await subject.hold(LANE, 3.0)

    await subject.acquire(LANE)

    assert time.slept == [3.0]


async def test_a_shorter_hold_never_shortens_a_longer_one() -> None:
    time = FakeTime()
    holds = MemoryHolds(time.monotonic)
    await holds.extend(LANE, 10.0)
    time.now += 1.0

    await holds.extend(LANE, 2.0)
    assert await holds.remaining(LANE) == 9.0
    await holds.extend(LANE, 30.0)
    assert await holds.remaining(LANE) == 30.0
    time.now += 30.0
    assert await holds.remaining(LANE) == 0.0


async def test_a_hold_on_one_lane_leaves_the_others_alone() -> None:
    time = FakeTime()
    subject = limiter(time, ScriptedCounts(time), {LANE: 2.0, "email:postmark": 0.0})
    await subject.hold("email:postmark", 30.0)

    await subject.acquire(LANE)

    assert time.slept == []


async def test_a_hold_that_comes_while_waiting_for_a_place_is_waited_out_too() -> None:
    time = FakeTime()
    counts = ScriptedCounts(time, 0.5, None)
    subject = limiter(time, counts)

    async def a_429_arrives() -> None:  # another worker's, as the first wait ends
        time.on_sleep = None
        await subject.hold(LANE, 4.0)

    time.on_sleep = a_429_arrives

    await subject.acquire(LANE)

    assert time.slept == [0.5, 4.0]
    assert [at for at, *_ in counts.asked] == [100.0, 104.5]


@pytest.mark.parametrize("seconds", [-1.0, float("nan"), float("inf")])
async def test_a_hold_of_no_sensible_length_is_refused(seconds: float) -> None:
    time = FakeTime()
    with pytest.raises(ValueError, match="a hold is"):
        await limiter(time, ScriptedCounts(time)).hold(LANE, seconds)


async def test_a_hold_of_zero_holds_nothing() -> None:
    time = FakeTime()
    subject = limiter(time, ScriptedCounts(time))

    await subject.hold(LANE, 0.0)
    await subject.acquire(LANE)

    assert time.slept == []


@pytest.mark.parametrize(
    ("rate", "cost", "message"),
    [
        (2.0, 3, "3 requests never fit the lane 'email:resend': at most 2 in any 1 s"),
        (2.5, 4, "4 requests never fit the lane 'email:resend': at most 3 in any 1 s"),
        (0.5, 2, "2 requests never fit the lane 'email:resend': at most 1 in any 2 s"),
        (2.0, 0, "a cost is a positive number of requests, got 0"),
    ],
)
async def test_a_cost_that_can_never_fit_is_refused_at_once(
    rate: float, cost: int, message: str
) -> None:
    time = FakeTime()
    counts = ScriptedCounts(time)

    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        await limiter(time, counts, {LANE: rate}).acquire(LANE, cost)

    assert counts.asked == []


async def test_a_storage_error_is_the_ports_and_never_shows_the_storages_words() -> None:
    time = FakeTime()
    counts = ScriptedCounts(time)
    counts.error = ConnectionError("redis://:hunter2@cache:6379 refused")
    subject = limiter(time, counts, errors=(ConnectionError,))

    with pytest.raises(LimiterUnavailable) as caught:
        await subject.acquire(LANE)

    assert "hunter2" not in str(caught.value)
    assert isinstance(caught.value.__cause__, ConnectionError)


async def test_close_gives_back_what_the_storage_holds() -> None:
    closed: list[bool] = []

    async def closing() -> None:
        closed.append(True)

    time = FakeTime()
    await limiter(time, ScriptedCounts(time), closing=closing).close()

    assert closed == [True]
