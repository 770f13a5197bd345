"""Pacing: how a rate in requests per second becomes limits a moving window can keep.

A rate holds in every window of time, not per clock second: no one-second window ever
holds more than the rate (no burst at a second's boundary). A count is whole, so a rate
that is not a whole number holds over the shortest whole number of seconds that makes it
whole: 0.5/s is one request in any 2 s, 2.5/s five in any 2 s and, so that those five are
not one burst, at most three (the rate rounded up) in any one second. A rate that no
window up to a minute makes whole is rounded down to the nearest one that does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

MAX_WINDOW_SECONDS = 60  # so the slowest rate is one request a minute
# How much later than a window allows a request may take the place of the one that left
# it. A request reaches the provider some milliseconds after its grant is counted (the
# round trip back from the limiter's storage, then the send), and those milliseconds
# differ from one request to the next: without a margin, a request could reach the
# provider less than a second after the one whose place it took (bench K4 saw 11 in a
# second for 10). Postgres counts every grant in windows this much longer; Redis and
# memory, whose windows are whole seconds, let a refused request try again this long
# after a place frees.
SPACING = 0.05
_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Window:
    """At most ``amount`` requests in any ``seconds`` seconds."""

    amount: int
    seconds: int


def windows_for(rate: float) -> tuple[Window, ...]:
    """The windows that together keep ``rate`` requests per second; () for 0 (unlimited).

    Raises ValueError for a negative or not finite rate, or one below one a minute."""
    if not (rate >= 0 and math.isfinite(rate)):
        raise ValueError(f"a rate is a finite number >= 0, got {rate!r}")
    if rate == 0:
        return ()
    if rate * MAX_WINDOW_SECONDS < 1 - _TOLERANCE:
        raise ValueError(
            f"a rate is 0 (unlimited) or at least 1/{MAX_WINDOW_SECONDS} (one request a"
            f" minute), got {rate!r}"
        )
    whole = Fraction(rate).limit_denominator(MAX_WINDOW_SECONDS)
    if abs(float(whole) - rate) > _TOLERANCE:  # no window up to a minute makes it whole
        whole = Fraction(math.floor(rate * MAX_WINDOW_SECONDS + _TOLERANCE), MAX_WINDOW_SECONDS)
    spread = Window(whole.numerator, whole.denominator)
    if spread.amount <= math.ceil(rate):  # whole, or at most one request per window
        return (spread,)
    return (spread, Window(math.ceil(rate), 1))


def email_lane(provider: str) -> str:
    """The limiter's lane of a provider's requests: every worker sending through it shares
    the one lane (its rate, and a hold after its 429)."""
    return f"email:{provider}"


@dataclass(frozen=True, slots=True)
class EmailPacing:
    """How campaigns hand messages to the provider: ``rate`` requests per second across
    every worker (0: unlimited), ``batch`` messages per request (1: one per request)."""

    rate: float
    batch: int
