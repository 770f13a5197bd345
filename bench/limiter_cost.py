"""What one acquire of the rate limiter costs, on Postgres (no Redis) and on Redis: measured
in the driver's process with leadmail's own limiter (bench K5, after its campaign, on its
database; the Redis of ``--redis-url``).

- Sequential: acquires one after another on one lane whose rate is never reached (100,000/s):
  the wall time of each (the hold read, then the check and count: two round trips either
  way), the driver's CPU per acquire, and the storage's (Postgres' processes, this
  database's backends and the server's own; Redis's own count, INFO cpu). The lane's window
  holds every grant of the last second (a thousand or more), as a busy lane's would.
- Quiet lanes: the same, each acquire on a lane of its own (no grant in its window): what
  an acquire costs at the rates providers set (a few to a hundred a second).
- One lane's ceiling: 32 tasks at once (a pool of 10 connections on Postgres, 16 on Redis)
  for 3 s on one such lane: acquires per second. On Postgres a lane's takes queue on its
  lock, so this is about the most requests per second one provider's lane can be paced at.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import redis.asyncio

from bench.common import log
from bench.cpu import postgres_cpu_by_pid
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.rate_limits import PostgresLimitStorage
from leadmail.adapters.limits.lanes import LaneLimiter
from leadmail.adapters.limits.storage import rate_limiter_from

LANE = "bench:acquire"
RATE = 100_000.0  # never reached: every acquire is counted at once
SEQUENTIAL = 2_000
TASKS = 32
CEILING_S = 3.0


StorageCpu = Callable[[], Awaitable[float]]  # the storage's CPU seconds so far


QUIET = [f"bench:quiet:{n}" for n in range(SEQUENTIAL)]
RATES = dict.fromkeys([LANE, *QUIET], RATE)


async def _sequential(
    limiter: LaneLimiter, storage_cpu: StorageCpu, lanes: list[str]
) -> dict[str, Any]:
    for _ in range(50):  # connections opened, statements prepared
        await limiter.acquire(LANE)
    took: list[float] = []
    stored = await storage_cpu()
    cpu, wall = time.process_time(), time.perf_counter()
    for lane in lanes:
        began = time.perf_counter()
        await limiter.acquire(lane)
        took.append(time.perf_counter() - began)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    stored = await storage_cpu() - stored
    took.sort()
    return {
        "acquires": SEQUENTIAL,
        "p50_us": round(statistics.median(took) * 1e6),
        "p99_us": round(took[int(len(took) * 0.99)] * 1e6),
        "per_s": round(SEQUENTIAL / wall),
        "driver_cpu_us_per_acquire": round(cpu / SEQUENTIAL * 1e6),
        "storage_cpu_us_per_acquire": round(stored / SEQUENTIAL * 1e6),
    }


async def _ceiling(limiter: LaneLimiter) -> dict[str, Any]:
    done = 0
    ends = time.perf_counter() + CEILING_S

    async def one() -> None:
        nonlocal done
        while time.perf_counter() < ends:
            await limiter.acquire(LANE)
            done += 1

    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(TASKS)))
    return {"tasks": TASKS, "per_s": round(done / (time.perf_counter() - began))}


async def _measure(limiter: LaneLimiter, storage_cpu: StorageCpu) -> dict[str, Any]:
    try:
        quiet = await _sequential(limiter, storage_cpu, QUIET)
        busy = await _sequential(limiter, storage_cpu, [LANE] * SEQUENTIAL)
        await asyncio.sleep(1.1)  # the window emptied
        return {"quiet": quiet, "sequential": busy, "one_lane_ceiling": await _ceiling(limiter)}
    finally:
        await limiter.close()


async def _costs(db_url: str, redis_url: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    name = urlsplit(db_url).path.lstrip("/")

    async def postgres_cpu() -> float:
        return sum(postgres_cpu_by_pid(name).values())

    async with Database.from_url(db_url, pool_min=10, pool_max=10).running() as database:
        limiter = rate_limiter_from("", RATES, shared=PostgresLimitStorage(database))
        found["postgres"] = await _measure(limiter, postgres_cpu)
    prefix = f"leadmail-bench-{secrets.token_hex(4)}"
    client = redis.asyncio.Redis.from_url(redis_url)

    async def redis_cpu() -> float:
        cpu = await client.info("cpu")
        return float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])

    limiter = rate_limiter_from(redis_url, RATES, key_prefix=prefix)
    try:
        found["redis"] = await _measure(limiter, redis_cpu)
    finally:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    return found


def closest_span(moments: list[float], rate: int) -> float | None:
    """The shortest time from one moment to the ``rate``-th after it: under 1 s, some
    second held more than ``rate``."""
    ordered = sorted(moments)
    spans = [b - a for a, b in zip(ordered, ordered[rate:], strict=False)]
    return round(min(spans), 3) if spans else None


async def _granted(db_url: str, lane: str) -> list[float]:
    connection = await asyncpg.connect(db_url)
    try:
        rows = await connection.fetch(
            "SELECT extract(epoch FROM granted_at)::float8 AS at FROM rate_grants WHERE lane = $1",
            lane,
        )
    finally:
        await connection.close()
    return [row["at"] for row in rows]


def granted_span(db_url: str, lane: str, rate: int) -> dict[str, Any]:
    """The campaign's grants as Postgres stamped them (kept a minute after the last):
    how close ``rate + 1`` of them came, on the database's clock."""
    moments = asyncio.run(_granted(db_url, lane))
    return {"grants": len(moments), "closest_span_s": closest_span(moments, rate)}


def acquire_costs(db_url: str, redis_url: str) -> dict[str, Any]:
    """The figures above, by storage; an error's words instead when one fails."""
    try:
        found = asyncio.run(_costs(db_url, redis_url))
    except Exception as e:  # a figure missing is reported, never the run lost
        log(f"acquire costs failed: {e!r}")
        return {"error": repr(e)[:500]}
    for name, figures in found.items():
        seq, top, quiet = figures["sequential"], figures["one_lane_ceiling"], figures["quiet"]
        log(
            f"acquire on {name}, quiet lanes: p50 {quiet['p50_us']} us, CPU"
            f" {quiet['driver_cpu_us_per_acquire']} us the driver's,"
            f" {quiet['storage_cpu_us_per_acquire']} us {name}'s;"
            f" a busy lane: p50 {seq['p50_us']} us, p99 {seq['p99_us']} us,"
            f" CPU {seq['driver_cpu_us_per_acquire']} us the driver's,"
            f" {seq['storage_cpu_us_per_acquire']} us {name}'s;"
            f" one lane's ceiling {top['per_s']:,}/s with {top['tasks']} tasks"
        )
    return found
