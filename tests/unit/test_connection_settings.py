"""LEADMAIL_MAX_CONNECTIONS, LEADMAIL_HEADER_TIMEOUT_SECONDS and LEADMAIL_BODY_IDLE_SECONDS:
defaulted, read, and refused with the variable named and what it expects."""

from __future__ import annotations

import pytest

from leadmail.config import ConfigError, Settings

NAMES = ("MAX_CONNECTIONS", "HEADER_TIMEOUT_SECONDS", "BODY_IDLE_SECONDS")


def test_the_defaults() -> None:
    settings = Settings.from_env({})

    assert settings.max_connections == 1000
    assert settings.header_timeout_seconds == 10.0
    assert settings.body_idle_seconds == 10.0
    # The same for settings built in code.
    built = Settings()
    assert (built.max_connections, built.header_timeout_seconds, built.body_idle_seconds) == (
        1000,
        10.0,
        10.0,
    )


def test_blank_values_mean_the_default() -> None:
    blank = {f"LEADMAIL_{name}": " " for name in NAMES}

    assert Settings.from_env(blank) == Settings.from_env({})


def test_each_is_read() -> None:
    settings = Settings.from_env(
        {
            "LEADMAIL_MAX_CONNECTIONS": "3",
            "LEADMAIL_HEADER_TIMEOUT_SECONDS": "1.5",
            "LEADMAIL_BODY_IDLE_SECONDS": " 30 ",
        }
    )

    assert settings.max_connections == 3
    assert isinstance(settings.max_connections, int)
    assert settings.header_timeout_seconds == 1.5
    assert settings.body_idle_seconds == 30.0
    assert isinstance(settings.body_idle_seconds, float)


@pytest.mark.parametrize("raw", ["0", "-1"])
def test_max_connections_must_be_at_least_one(raw: str) -> None:
    with pytest.raises(
        ConfigError, match=f"LEADMAIL_MAX_CONNECTIONS must be a positive number, got '{raw}'"
    ):
        Settings.from_env({"LEADMAIL_MAX_CONNECTIONS": raw})


@pytest.mark.parametrize("raw", ["many", "1.5", "1e3"])
def test_max_connections_must_be_a_whole_number(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_MAX_CONNECTIONS must be a number"):
        Settings.from_env({"LEADMAIL_MAX_CONNECTIONS": raw})


@pytest.mark.parametrize("name", ["HEADER_TIMEOUT_SECONDS", "BODY_IDLE_SECONDS"])
@pytest.mark.parametrize("raw", ["0", "-2", "nan", "inf"])
def test_a_timeout_must_be_a_positive_number(name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name} must be a positive number"):
        Settings.from_env({f"LEADMAIL_{name}": raw})


@pytest.mark.parametrize("name", ["HEADER_TIMEOUT_SECONDS", "BODY_IDLE_SECONDS"])
def test_a_timeout_must_be_a_number(name: str) -> None:
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name} must be a number, got 'soon'"):
        Settings.from_env({f"LEADMAIL_{name}": "soon"})
