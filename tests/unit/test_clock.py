"""The service's clock: UTC, whole milliseconds, and one text form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.clock import utc_now


def test_now_is_utc_whole_milliseconds_and_now() -> None:
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    for _ in range(1000):
        now = utc_now()
        assert now.tzinfo is UTC
        assert now.microsecond % 1000 == 0
    assert before <= now <= datetime.now(UTC)


def test_iso_form_ends_in_z_with_milliseconds() -> None:
    moment = datetime(2026, 11, 22, 10, 15, 30, 123000, tzinfo=UTC)

    assert to_iso(moment) == "2026-11-22T10:15:30.123Z"
    assert to_iso(moment.replace(microsecond=0)) == "2026-11-22T10:15:30.000Z"


@given(
    st.datetimes(
        min_value=datetime(1900, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), UTC]),
    )
)
def test_iso_form_is_the_utc_moment_whatever_the_zone(moment: datetime) -> None:
    text = to_iso(moment)

    assert text.endswith("Z")
    assert datetime.fromisoformat(text) == moment.replace(
        microsecond=moment.microsecond // 1000 * 1000
    )
