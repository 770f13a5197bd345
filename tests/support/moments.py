"""Moments counted in windows: how many requests a stand-in saw within any stretch of time
(the e2e campaign tests and the bench's campaign scenarios both ask)."""

from __future__ import annotations


def most_in_any(times: list[float], seconds: float) -> int:
    """The most of ``times`` within any window of ``seconds`` (end excluded)."""
    ordered = sorted(times)
    most, start = 0, 0
    for end, moment in enumerate(ordered):
        while moment - ordered[start] >= seconds:
            start += 1
        most = max(most, end - start + 1)
    return most
