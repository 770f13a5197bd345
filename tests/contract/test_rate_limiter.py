"""The RateLimiter contract (ports/rate_limits.py) on its real storages, in real time: the
`limits` package's moving windows in this process's memory and in the machine's Redis, and
the grants and holds in Postgres (adapters/db/rate_limits.py).

"Workers" are limiter instances: on Redis each has its own connection pool, and on Postgres
each its own Database (its own pool), as separate processes would, and they share the
counts and holds through Redis or the database; in memory, tasks of one process share its
one limiter. A request's moment is when acquire() returned; the windows checked are 0.9 s
rather than 1 s so that a return delayed on a busy machine cannot fail a test, while a
limiter that let a burst through still would.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
import redis.asyncio

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.rate_limits import KEPT_SECONDS, PostgresLimitStorage
from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.storage import rate_limiter_from
from leadmail.domain.pacing import MAX_WINDOW_SECONDS, SPACING
from leadmail.ports.rate_limits import LimiterUnavailable
from tests.e2e.tcp_proxy import tcp_proxy
from tests.redis_server import keys_deleted, new_prefix
from tests.support.moments import most_in_any

LANE = "email:resend"
SLACK = 0.1  # how late acquire() may return on a busy machine, inside a window
LATE = 0.5  # how late a wait may end on a busy machine (a bound on slowness only)
NO_WAIT = 0.5  # a call that had not to wait (waiting is for a window: 1 s or more)
WORKERS = 3  # the most limiters ("workers") a test makes: one Database each on Postgres


@dataclass
class Storage:
    """Makes the limiters ("workers") of one test, all on one storage."""

    kind: str
    make: Callable[[Mapping[str, float]], LaneLimiter]
    client: redis.asyncio.Redis | None = None  # the test's own look into Redis
    prefix: str = ""
    database: Database | None = None  # the test's own look into Postgres
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

    async def leftovers(self) -> int:
        """What the storage keeps (Redis keys, Postgres rows); 0 in memory."""
        if self.client is not None:
            return len([key async for key in self.client.scan_iter(match=f"{self.prefix}:*")])
        if self.database is not None:
            return len(await grants(self.database)) + len(await holds(self.database))
        return 0


@pytest.fixture(
    params=[
        "memory",
        pytest.param("redis", marks=pytest.mark.redis),
        pytest.param("postgres", marks=pytest.mark.postgres),
    ]
)
def where(request: pytest.FixtureRequest) -> tuple[str, str]:
    """The storage's kind and URL. (A plain fixture: the session's async Postgres fixture
    cannot be set up on demand from inside a running async one.)"""
    kind: str = request.param
    if kind == "memory":
        return kind, ""
    return kind, request.getfixturevalue("redis_url" if kind == "redis" else "postgres_url")


@pytest.fixture
async def storage(where: tuple[str, str]) -> AsyncIterator[Storage]:
    async with storage_of(*where) as subject:
        yield subject


@pytest.fixture
async def postgres(postgres_url: str) -> AsyncIterator[Storage]:
    """The Postgres storage alone, for what only it keeps (rows, on the database's clock)."""
    async with storage_of("postgres", postgres_url) as subject:
        yield subject


@contextlib.asynccontextmanager
async def storage_of(kind: str, url: str) -> AsyncIterator[Storage]:
    async with contextlib.AsyncExitStack() as stack:
        if kind == "memory":
            subject = Storage(kind, lambda rates: rate_limiter_from("", rates))
        elif kind == "redis":
            prefix = new_prefix()
            client = await stack.enter_async_context(keys_deleted(url, prefix))
            subject = Storage(kind, lambda rates: rate_limiter_from(url, rates, key_prefix=prefix))
            subject.client, subject.prefix = client, prefix
        else:
            databases = [
                await stack.enter_async_context(rate_database(url)) for _ in range(WORKERS)
            ]
            turn = itertools.count()

            def make(rates: Mapping[str, float]) -> LaneLimiter:
                database = databases[next(turn) % WORKERS]
                return rate_limiter_from("", rates, shared=PostgresLimitStorage(database))

            subject = Storage(kind, make, database=databases[0])
        try:
            yield subject
        finally:
            for limiter in subject.made:
                await limiter.close()


@contextlib.asynccontextmanager
async def rate_database(url: str) -> AsyncIterator[Database]:
    """A pool of its own on the session's migrated database, the limiter's rows cleared
    before and after (the tests use the same lanes)."""
    async with Database.from_url(url, pool_min=4, pool_max=4).running() as database:
        await cleared(database)
        try:
            yield database
        finally:
            await cleared(database)


async def cleared(database: Database) -> None:
    assert database.pool is not None
    await database.pool.execute("DELETE FROM rate_grants")
    await database.pool.execute("DELETE FROM rate_holds")


async def grants(database: Database, lane: str = "") -> list[tuple[float, int]]:
    """The lane's grants (every lane's when none is named): their age in seconds on the
    database's clock, and their cost. Every age is from one reading of the clock (one
    clock_timestamp() per row would move while the rows are read, and a backend paused
    between two rows would bring their moments closer than the grants were)."""
    assert database.pool is not None
    rows = await database.pool.fetch(
        "WITH now AS MATERIALIZED (SELECT clock_timestamp() AS t)"
        " SELECT extract(epoch FROM now.t - granted_at)::float8 AS age, cost"
        " FROM rate_grants, now WHERE $1 = '' OR lane = $1 ORDER BY granted_at",
        lane,
    )
    return [(row["age"], row["cost"]) for row in rows]


async def holds(database: Database) -> dict[str, float]:
    """Each held lane's hold, in seconds from now (negative when over)."""
    assert database.pool is not None
    rows = await database.pool.fetch(
        "SELECT lane, extract(epoch FROM held_until - clock_timestamp())::float8 AS left"
        " FROM rate_holds"
    )
    return {row["lane"]: row["left"] for row in rows}


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


async def test_an_unlimited_lane_never_waits_and_counts_nothing(storage: Storage) -> None:
    worker = storage.worker({LANE: 0.0})

    moments = await acquisitions([worker], 200)

    # Paced at any rate this would take 100 s (2 a second); unpaced it is 200 round trips
    # on Redis (the 429 hold is still read), which took up to 1.06 s on a loaded machine
    # with the suite on both cores: the bound tells the two apart with room to spare.
    assert moments[-1] < 5.0
    assert await storage.leftovers() == 0


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


@pytest.mark.postgres
@pytest.mark.parametrize(("rate", "windows"), [(5.0, {1.0: 5}), (2.5, {1.0: 3, 2.0: 5})])
async def test_postgres_grants_keep_the_rate_exactly_on_the_databases_clock(
    postgres: Storage, rate: float, windows: dict[float, int]
) -> None:
    # Three pools, tasks of all three at once: the grants as the database stamped them
    # (no delay of a return in them, so no slack) never exceed the rate in any window,
    # nor in one SPACING longer (what keeps the requests' jitter from bunching them).
    assert postgres.database is not None
    team = [postgres.worker({LANE: rate}) for _ in range(WORKERS)]

    await acquisitions(team, 12)

    stamped = await grants(postgres.database, LANE)
    assert len(stamped) == 12
    moments = [-age for age, _ in stamped]
    for seconds, most in windows.items():
        assert most_in_any(moments, seconds + SPACING) <= most


@pytest.mark.postgres
async def test_postgres_prunes_grants_older_than_the_longest_window(postgres: Storage) -> None:
    assert postgres.database is not None
    worker = postgres.worker({LANE: 3.0, "email:postmark": 3.0})
    await acquisitions([worker], 3)
    await worker.acquire("email:postmark", cost=2)
    assert postgres.database.pool is not None
    # Every grant so far, older than any window is long.
    assert KEPT_SECONDS >= MAX_WINDOW_SECONDS + SPACING
    await postgres.database.pool.execute(
        "UPDATE rate_grants SET granted_at = granted_at - make_interval(secs => $1::float8)",
        float(KEPT_SECONDS),
    )

    moments = await acquisitions([worker], 3)  # the lane has its whole rate again

    assert moments[-1] < NO_WAIT
    assert [cost for _, cost in await grants(postgres.database, LANE)] == [1, 1, 1]
    # Another lane's grants go when that lane is next counted.
    assert [cost for _, cost in await grants(postgres.database, "email:postmark")] == [2]
    await worker.acquire("email:postmark")
    assert [cost for _, cost in await grants(postgres.database, "email:postmark")] == [1]


@pytest.mark.postgres
async def test_postgres_keeps_one_hold_per_lane_the_longest(postgres: Storage) -> None:
    assert postgres.database is not None
    first, second = postgres.worker({LANE: 2.0}), postgres.worker({LANE: 2.0})

    await first.hold(LANE, 5.0)
    await second.hold(LANE, 1.0)

    held = await holds(postgres.database)
    assert list(held) == [LANE]
    assert 4.0 < held[LANE] <= 5.0


@pytest.mark.postgres
async def test_a_postgres_that_stops_answering_is_the_limiters_error(postgres_url: str) -> None:
    parts = urlsplit(postgres_url)
    with tcp_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
        through = parts._replace(netloc=f"{parts.username}@127.0.0.1:{proxy.port}").geturl()
        database = Database.from_url(through, pool_min=1, pool_max=2, connect_timeout=2.0)
        async with database.running():
            limiter = rate_limiter_from("", {LANE: 2.0}, shared=PostgresLimitStorage(database))
            await limiter.hold(LANE, 0.0)  # nothing to hold: no round trip
            proxy.stop()

            with pytest.raises(LimiterUnavailable):
                await limiter.acquire(LANE)
            with pytest.raises(LimiterUnavailable):
                await limiter.hold(LANE, 1.0)
            with pytest.raises(LimiterUnavailable):
                await limiter.unheld(LANE)
        with pytest.raises(LimiterUnavailable):  # closed: no pool to ask
            await limiter.acquire(LANE)
