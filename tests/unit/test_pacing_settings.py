"""LEADMAIL_EMAIL_RATE, LEADMAIL_EMAIL_BATCH and LEADMAIL_REDIS_URL: read, defaulted from
the provider registry, refused with the variable named; where the rate is kept (Redis when
set, else the database every process shares, else this process)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from leadmail.adapters.limits.factory import rate_limiter_for
from leadmail.adapters.mail.providers import PROVIDER_NAMES
from leadmail.config import ConfigError, Settings
from leadmail.domain.pacing import EmailPacing, Window
from leadmail.ports.rate_limits import LimiterUnavailable, LimitStorage

POSTGRES = "postgresql://leadmail@db:5432/leadmail"


def env_for(provider: str, **values: str) -> dict[str, str]:
    env = {"LEADMAIL_EMAIL_PROVIDER": provider, "LEADMAIL_EMAIL_API_KEY": "key-1"}
    if provider == "mailgun":
        env["LEADMAIL_EMAIL_DOMAIN"] = "mg.school.example"
    env.update({f"LEADMAIL_{name}": value for name, value in values.items()})
    return env


@pytest.mark.parametrize(
    ("provider", "pacing"),
    [
        ("console", EmailPacing(rate=0.0, batch=1)),
        ("resend", EmailPacing(rate=2.0, batch=100)),
        ("postmark", EmailPacing(rate=0.0, batch=500)),
        ("sendgrid", EmailPacing(rate=0.0, batch=1)),
        ("mailgun", EmailPacing(rate=0.0, batch=1)),
        ("mailpit", EmailPacing(rate=0.0, batch=1)),
    ],
)
def test_unset_means_the_providers_own_rate_and_batch(provider: str, pacing: EmailPacing) -> None:
    settings = Settings.from_env(env_for(provider))

    assert settings.email_pacing() == pacing
    assert (settings.email_rate, settings.email_batch) == (None, None)
    # The same for settings built in code.
    assert Settings(email_provider=settings.email_provider).email_pacing() == pacing
    assert provider in PROVIDER_NAMES


@pytest.mark.parametrize(("raw", "rate"), [("0", 0.0), ("0.5", 0.5), ("10", 10.0), ("2.5", 2.5)])
def test_the_rate_is_any_number_that_can_be_kept(raw: str, rate: float) -> None:
    settings = Settings.from_env(env_for("resend", EMAIL_RATE=raw))

    assert settings.email_rate == rate
    assert settings.email_pacing() == EmailPacing(rate=rate, batch=100)


@pytest.mark.parametrize("raw", ["-1", "nan", "inf", "fast", "0.001"])
def test_a_rate_that_cannot_be_kept_is_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_EMAIL_RATE") as caught:
        Settings.from_env(env_for("resend", EMAIL_RATE=raw))

    assert repr(raw) in str(caught.value)


def test_a_rate_below_one_a_minute_names_the_slowest_rate() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env_for("resend", EMAIL_RATE="0.01"))

    assert str(caught.value) == (
        "LEADMAIL_EMAIL_RATE must be 0 (unlimited) or at least 1/60 (one request a minute),"
        " got '0.01'"
    )


@pytest.mark.parametrize(
    ("provider", "raw", "batch"),
    [("resend", "1", 1), ("resend", "100", 100), ("postmark", "500", 500), ("sendgrid", "1", 1)],
)
def test_the_batch_is_1_to_the_providers_max(provider: str, raw: str, batch: int) -> None:
    assert Settings.from_env(env_for(provider, EMAIL_BATCH=raw)).email_pacing().batch == batch


@pytest.mark.parametrize(
    ("provider", "raw", "message"),
    [
        ("resend", "101", "at most 100, the resend provider's batch limit, got 101"),
        ("postmark", "501", "at most 500, the postmark provider's batch limit, got 501"),
        (
            "sendgrid",
            "2",
            "at most 1, the sendgrid provider's batch limit (it has no batch endpoint), got 2",
        ),
        ("console", "50", "at most 1, the console provider's batch limit"),
    ],
)
def test_a_batch_over_the_providers_max_is_refused_naming_the_limit(
    provider: str, raw: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env_for(provider, EMAIL_BATCH=raw))

    assert str(caught.value).startswith("LEADMAIL_EMAIL_BATCH must be " + message)


@pytest.mark.parametrize("raw", ["0", "-1", "2.5", "many"])
def test_a_batch_that_is_not_a_positive_whole_number_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_EMAIL_BATCH"):
        Settings.from_env(env_for("postmark", EMAIL_BATCH=raw))


@pytest.mark.parametrize(
    "url", ["redis://127.0.0.1:6379/0", "rediss://:secret@cache.example:6380/2", ""]
)
def test_the_redis_url(url: str) -> None:
    assert Settings.from_env({"LEADMAIL_REDIS_URL": url}).redis_url == url


@pytest.mark.parametrize("url", ["http://cache:6379", "127.0.0.1:6379", "memcached://x"])
def test_a_redis_url_of_another_kind_is_refused_without_echoing_it(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LEADMAIL_REDIS_URL": url})

    assert str(caught.value) == "LEADMAIL_REDIS_URL must start with redis:// or rediss://"


def test_settings_never_show_the_redis_url() -> None:
    settings = Settings.from_env({"LEADMAIL_REDIS_URL": "redis://:hunter2@cache:6379/0"})

    assert "hunter2" not in repr(settings)


@dataclass
class RecordedStorage(LimitStorage):
    """A shared storage that grants every take and holds nothing, and records each call."""

    calls: list[tuple[str, ...]] = field(default_factory=list)

    async def take(self, lane: str, cost: int, windows: Sequence[Window]) -> float | None:
        self.calls.append(("take", lane, *(f"{w.amount}/{w.seconds}s" for w in windows)))
        return None

    async def remaining(self, lane: str) -> float:
        self.calls.append(("remaining", lane))
        return 0.0

    async def extend(self, lane: str, seconds: float) -> None:
        self.calls.append(("extend", lane, f"{seconds:g}"))


async def test_without_redis_the_rate_and_holds_are_kept_in_the_shared_database() -> None:
    # bootstrap hands over the Postgres storage: every process counts there.
    shared = RecordedStorage()
    settings = Settings.from_env(env_for("resend", DATABASE_URL=POSTGRES))
    limiter = rate_limiter_for(settings, shared)

    await limiter.acquire("email:resend")
    await limiter.hold("email:resend", 1.5)

    assert shared.calls == [
        ("remaining", "email:resend"),
        ("take", "email:resend", "2/1s"),  # Resend's default rate
        ("extend", "email:resend", "1.5"),
    ]


async def test_redis_when_set_keeps_them_rather_than_the_database() -> None:
    shared = RecordedStorage()
    settings = Settings.from_env(
        env_for("resend", DATABASE_URL=POSTGRES, REDIS_URL="redis://127.0.0.1:1/0")
    )
    limiter = rate_limiter_for(settings, shared)
    try:
        with pytest.raises(LimiterUnavailable):  # the (closed) Redis was asked
            await limiter.acquire("email:resend")
    finally:
        await limiter.close()

    assert shared.calls == []
