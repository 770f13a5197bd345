"""A rate in requests per second as the moving windows that keep it (domain/pacing.py)."""

from __future__ import annotations

import math

import pytest

from leadmail.domain.pacing import MAX_WINDOW_SECONDS, Window, email_lane, windows_for


@pytest.mark.parametrize(
    ("rate", "windows"),
    [
        (1, [Window(1, 1)]),
        (2.0, [Window(2, 1)]),  # Resend's default: no one-second window holds three
        (100, [Window(100, 1)]),
        (0.5, [Window(1, 2)]),  # one request in any two seconds
        (0.25, [Window(1, 4)]),
        (1 / 3, [Window(1, 3)]),
        (0.1, [Window(1, 10)]),
        (1 / MAX_WINDOW_SECONDS, [Window(1, 60)]),
        # Not a whole number: five in any two seconds, never three in one second.
        (2.5, [Window(5, 2), Window(3, 1)]),
        (1.5, [Window(3, 2), Window(2, 1)]),
        (0.7, [Window(7, 10), Window(1, 1)]),  # seven in ten seconds, one at a time
    ],
)
def test_a_rate_becomes_the_windows_that_keep_it(rate: float, windows: list[Window]) -> None:
    assert list(windows_for(rate)) == windows


def test_zero_is_unlimited() -> None:
    assert windows_for(0) == ()
    assert windows_for(0.0) == ()


@pytest.mark.parametrize("rate", [2.5, 0.7, 1 / 3, 1.23456, 7.77, 0.123])
def test_no_window_lets_more_through_than_the_rate(rate: float) -> None:
    for window in windows_for(rate):
        # The long window never above the rate; the one-second one only rounds up.
        limit = rate * window.seconds if window.seconds > 1 else math.ceil(rate)
        assert window.amount <= limit + 1e-9


def test_a_rate_no_window_up_to_a_minute_makes_whole_is_rounded_down() -> None:
    [spread, second] = windows_for(1.23456)

    assert spread.amount / spread.seconds <= 1.23456
    assert spread.seconds <= MAX_WINDOW_SECONDS
    assert second == Window(2, 1)


@pytest.mark.parametrize("rate", [-1, -0.5, math.nan, math.inf, 0.01, 1 / 61])
def test_a_rate_that_cannot_be_kept_is_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="a rate is"):
        windows_for(rate)


def test_a_providers_lane_is_named_after_it() -> None:
    assert email_lane("resend") == "email:resend"
    assert email_lane("postmark") != email_lane("resend")
