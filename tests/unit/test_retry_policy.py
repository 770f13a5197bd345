from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.delivery import MAX_RETRY_AFTER_S, RetryPolicy, parse_retry_after


@given(
    attempt=st.integers(min_value=2, max_value=4),
    rand=st.floats(min_value=0, max_value=0.999999),
)
def test_full_jitter_stays_under_the_exponential_ceiling(attempt: int, rand: float) -> None:
    policy = RetryPolicy(max_attempts=4, base_delay=0.25, max_delay=8.0, deadline=100.0)
    wait = policy.delay_before(attempt, None, remaining=100.0, rand=lambda: rand)
    assert wait is not None
    assert 0 <= wait <= min(8.0, 0.25 * 2 ** (attempt - 2))


def test_no_attempt_beyond_the_maximum() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert policy.delay_before(3, None, remaining=100.0, rand=lambda: 0.5) is not None
    assert policy.delay_before(4, None, remaining=100.0, rand=lambda: 0.5) is None


def test_retry_after_is_a_floor_capped_at_thirty_seconds() -> None:
    policy = RetryPolicy(max_attempts=4, deadline=100.0)
    assert policy.delay_before(2, 3.0, remaining=100.0, rand=lambda: 0.0) == 3.0
    assert policy.delay_before(2, 300.0, remaining=100.0, rand=lambda: 0.0) == MAX_RETRY_AFTER_S


def test_a_wait_past_the_deadline_gives_up() -> None:
    policy = RetryPolicy(max_attempts=4)
    assert policy.delay_before(2, 10.0, remaining=5.0, rand=lambda: 0.0) is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("120", 30.0),
        ("0", 0.0),
        (None, None),
        ("soon", None),
        ("-1", None),
        ("nan", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
    ],
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds
