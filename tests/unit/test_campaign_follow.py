"""``leadmail campaigns status --follow``: the rate it shows is what was sent while it
watched, or the campaign's own ``rate_per_minute`` until something moves; never what was
sent before, over the moment it has watched."""

from __future__ import annotations

from dataclasses import replace

from leadmail.adapters.http.campaign_examples import RUNNING
from leadmail.cli.campaigns import WatchedRate
from leadmail.services.campaigns import CampaignView


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sent(view: CampaignView, count: int, rate_per_minute: int) -> CampaignView:
    return replace(view, counts=replace(view.counts, sent=count), rate_per_minute=rate_per_minute)


def test_until_something_moves_the_campaigns_own_rate_is_shown() -> None:
    clock = Clock()
    first = sent(RUNNING, 4_000, 120)  # 4,000 sent before, 2 a second lately
    watched = WatchedRate(first, clock)

    assert watched.per_second(first) == 2.0
    clock.now += 0.5
    assert watched.per_second(sent(RUNNING, 4_000, 90)) == 1.5


def test_once_something_moves_the_rate_is_what_was_sent_while_watching() -> None:
    clock = Clock()
    watched = WatchedRate(sent(RUNNING, 4_000, 120), clock)

    clock.now += 4.0
    assert watched.per_second(sent(RUNNING, 4_010, 600)) == 2.5
    clock.now += 6.0
    assert watched.per_second(sent(RUNNING, 4_030, 600)) == 3.0


def test_with_nothing_moving_and_no_rate_of_its_own_no_rate_is_shown() -> None:
    clock = Clock()
    done = sent(RUNNING, 8_000, 0)
    watched = WatchedRate(done, clock)

    clock.now += 1.0
    assert watched.per_second(done) is None
