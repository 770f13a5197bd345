"""InProcessJobQueue (SQLite's job queue and the memory adapters'): a job runs at once, or
not before its ``run_at``; jobs queued before start wait for it; stop cancels what waits."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.memory.jobs import InProcessJobQueue


def queue_that_records() -> tuple[InProcessJobQueue, list[tuple[str, datetime]]]:
    ran: list[tuple[str, datetime]] = []
    queue = InProcessJobQueue()

    async def handler(payload: str) -> None:
        ran.append((payload, datetime.now(UTC)))

    queue.handle("job", handler)
    return queue, ran


async def test_a_job_runs_not_before_its_run_at() -> None:
    queue, ran = queue_that_records()
    await queue.start()
    asked = datetime.now(UTC)
    try:
        await queue.enqueue("job", "later", run_at=asked + timedelta(milliseconds=300))
        await queue.enqueue("job", "now")
        await queue.enqueue("job", "past", run_at=asked - timedelta(days=1))
        await queue.idle()
        assert [payload for payload, _ in ran] == ["now", "past"]  # idle: due jobs only

        await asyncio.sleep(0.6)
        await queue.idle()
    finally:
        await queue.stop()

    assert [payload for payload, _ in ran] == ["now", "past", "later"]
    assert ran[2][1] >= asked + timedelta(milliseconds=300)


async def test_jobs_queued_before_start_keep_their_run_at() -> None:
    queue, ran = queue_that_records()
    await queue.enqueue("job", "later", run_at=datetime.now(UTC) + timedelta(milliseconds=200))
    await queue.enqueue("job", "first")

    await queue.start()
    try:
        await queue.idle()
        assert [payload for payload, _ in ran] == ["first"]
        await asyncio.sleep(0.5)
        await queue.idle()
    finally:
        await queue.stop()

    assert [payload for payload, _ in ran] == ["first", "later"]


async def test_stop_cancels_a_job_waiting_for_its_time() -> None:
    queue, ran = queue_that_records()
    await queue.start()
    await queue.enqueue("job", "later", run_at=datetime.now(UTC) + timedelta(milliseconds=200))

    await queue.stop()
    await asyncio.sleep(0.4)

    assert ran == []


async def test_a_kind_without_a_handler_is_refused() -> None:
    queue, _ = queue_that_records()

    with pytest.raises(LookupError, match="no handler"):
        await queue.enqueue("other", "x", run_at=datetime.now(UTC))


async def test_a_schedule_runs_at_each_of_its_times_while_started() -> None:
    queue = InProcessJobQueue()
    runs: list[datetime] = []

    async def handler(payload: str) -> None:
        assert payload == ""
        runs.append(datetime.now(UTC))

    queue.schedule("purge", "* * * * * *", handler)  # every second
    await queue.start()
    try:
        async with asyncio.timeout(10):
            while len(runs) < 2:
                await asyncio.sleep(0.02)
    finally:
        await queue.stop()
    stopped_with = len(runs)

    assert all(at.microsecond < 200_000 for at in runs)  # at its second, not later
    assert (runs[1] - runs[0]).total_seconds() == pytest.approx(1.0, abs=0.2)
    await asyncio.sleep(1.2)
    assert len(runs) == stopped_with  # stopped: no more runs


async def test_a_failing_scheduled_run_leaves_the_schedule_going() -> None:
    queue = InProcessJobQueue()
    tries: list[datetime] = []

    async def handler(_: str) -> None:
        tries.append(datetime.now(UTC))
        raise RuntimeError("the database is away")

    queue.schedule("purge", "* * * * * *", handler)
    await queue.start()
    try:
        async with asyncio.timeout(10):
            while len(tries) < 2:
                await asyncio.sleep(0.02)
    finally:
        await queue.stop()
