"""What the server says at start about how it will pace its provider requests: nothing
about the rate holding per process any more. On Postgres without Redis the rate is kept in
the database every process shares (tests/contract/test_rate_limiter.py,
tests/e2e/test_campaigns.py), so no setting leaves it per process."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from leadmail.config import Settings
from tests.api.support import open_api

POSTGRES = "postgresql://leadmail@db:5432/leadmail"  # not connected to: memory adapters


def settings(**fields: object) -> Settings:
    return Settings(migrate_on_start=False, email_api_key="re_1", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "given",
    [
        settings(database_url=POSTGRES, email_provider="resend"),  # it warned here before
        settings(database_url=POSTGRES, email_provider="postmark", email_rate=0.5),
        settings(database_url=POSTGRES, email_provider="resend", redis_url="redis://r:6379"),
        settings(email_provider="resend"),  # SQLite: one process sends
    ],
)
async def test_the_server_no_longer_warns_that_its_rate_holds_per_process(
    given: Settings,
) -> None:
    with capture_logs() as logged:
        async with open_api(settings=given):
            pass

    assert [e for e in logged if e["event"] == "email_rate_per_process"] == []
    assert [e for e in logged if e["log_level"] == "warning"] == []
