"""Readiness: the storage first, then the start-up work; the API gated until it is done."""

from __future__ import annotations

import pytest

from leadmail.ports.errors import StorageUnavailable
from leadmail.services.health import STARTING, Health


class ScriptedProbe:
    """A ReadinessProbe answering from a list, one answer per question (the last repeats)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked = 0

    async def not_ready(self) -> str | None:
        self.asked += 1
        return self.answers[min(self.asked, len(self.answers)) - 1]


async def test_ready_needs_the_storage_and_the_start_up_work() -> None:
    probe = ScriptedProbe(None)
    health = Health(probe)

    assert await health.not_ready() == STARTING
    health.mark_started()
    assert await health.not_ready() is None


async def test_storage_that_goes_away_after_the_start_is_the_reason() -> None:
    health = Health(ScriptedProbe("The database is unreachable (OSError)"))
    health.mark_started()

    assert await health.not_ready() == "The database is unreachable (OSError)"


async def test_storage_reason_comes_before_starting() -> None:
    health = Health(ScriptedProbe("2 database migration(s) not applied yet"))

    assert await health.not_ready() == "2 database migration(s) not applied yet"


async def test_memory_storage_is_always_ready() -> None:
    health = Health(None)

    assert await health.storage_not_ready() is None


def test_the_api_is_refused_until_started() -> None:
    health = Health(None)

    with pytest.raises(StorageUnavailable, match="migrations are not applied yet"):
        health.check_started()
    health.mark_started()
    health.check_started()  # no longer raises


async def test_waiting_for_storage_asks_until_it_is_ready() -> None:
    probe = ScriptedProbe("pending", "pending", None)

    await Health(probe).wait_for_storage(every=0.001)

    assert probe.asked == 3
