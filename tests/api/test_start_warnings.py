"""What the server says at start about how it will pace its provider requests: on
Postgres with a rate and no Redis, that the rate holds per process."""

from __future__ import annotations

import pytest
import structlog
from structlog.testing import capture_logs

from leadmail.adapters.limits import factory
from leadmail.config import Settings
from tests.api.support import open_api

POSTGRES = "postgresql://leadmail@db:5432/leadmail"  # not connected to: memory adapters
REDIS = "redis://cache:6379/0"


def settings(**fields: object) -> Settings:
    return Settings(migrate_on_start=False, email_api_key="re_1", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "warned"),
    [
        (settings(database_url=POSTGRES, email_provider="resend"), True),
        (settings(database_url=POSTGRES, email_provider="postmark", email_rate=0.5), True),
        (
            settings(database_url=POSTGRES, email_provider="resend", redis_url="redis://r:6379"),
            False,
        ),
        (settings(database_url=POSTGRES, email_provider="resend", email_rate=0.0), False),
        (settings(email_provider="resend"), False),  # SQLite: one process sends
    ],
)
async def test_the_server_warns_when_its_rate_would_hold_per_process(
    monkeypatch: pytest.MonkeyPatch, given: Settings, warned: bool
) -> None:
    with capture_logs() as logged:
        # A logger made inside the capture (a module's own may be cached already).
        monkeypatch.setattr(factory, "log", structlog.get_logger("leadmail"))
        async with open_api(settings=given):
            pass

    warnings = [e for e in logged if e["event"] == "email_rate_per_process"]
    assert len(warnings) == (1 if warned else 0)
    if warned:
        [warning] = warnings
        assert warning["log_level"] == "warning"
        assert "LEADMAIL_REDIS_URL is not set" in warning["detail"]
        assert warning["rate"] == given.email_pacing().rate
