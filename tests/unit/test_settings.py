"""Settings.from_env, always given an explicit environment."""

from __future__ import annotations

import io
import sys

import pytest

from leadmail.config import DEFAULT_DATABASE_URL, ConfigError, Settings


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> None:
    # Patched inside the test body: pytest re-installs its own sys.stderr between phases.
    monkeypatch.setattr(sys, "stderr", _Terminal() if terminal else io.StringIO())


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr_is_a_terminal(monkeypatch, terminal=False)

    settings = Settings.from_env({})

    assert settings == Settings(
        database_url=DEFAULT_DATABASE_URL,
        host="127.0.0.1",
        port=8000,
        log_format="json",
        log_level="INFO",
        db_pool_min=2,
        db_pool_max=10,
        db_connect_timeout=5.0,
        db_command_timeout=30.0,
        max_body_bytes=1_048_576,
        migrate_on_start=True,
    )
    assert settings.is_sqlite


def test_log_format_defaults_to_console_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr_is_a_terminal(monkeypatch, terminal=True)

    assert Settings.from_env({}).log_format == "console"


def test_blank_values_mean_the_default() -> None:
    blank = {
        f"LEADMAIL_{name}": "  "
        for name in (
            "DATABASE_URL",
            "HOST",
            "PORT",
            "LOG_FORMAT",
            "LOG_LEVEL",
            "DB_POOL_MIN",
            "DB_POOL_MAX",
            "DB_CONNECT_TIMEOUT",
            "DB_COMMAND_TIMEOUT",
            "MAX_BODY_BYTES",
            "MIGRATE_ON_START",
        )
    }

    assert Settings.from_env(blank) == Settings.from_env({})


def test_other_variables_are_ignored() -> None:
    assert Settings.from_env({"PORT": "1", "leadmail_port": "2", "LEADMAIL_PORTS": "3"}).port == (
        8000
    )


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "LEADMAIL_DATABASE_URL": "postgresql://leadmail@db:5432/leadmail",
            "LEADMAIL_HOST": " 0.0.0.0 ",
            "LEADMAIL_PORT": "9090",
            "LEADMAIL_LOG_FORMAT": "console",
            "LEADMAIL_LOG_LEVEL": "debug",
            "LEADMAIL_DB_POOL_MIN": "1",
            "LEADMAIL_DB_POOL_MAX": "20",
            "LEADMAIL_DB_CONNECT_TIMEOUT": "2.5",
            "LEADMAIL_DB_COMMAND_TIMEOUT": "60",
            "LEADMAIL_MAX_BODY_BYTES": "65536",
            "LEADMAIL_MIGRATE_ON_START": "false",
        }
    )

    assert settings == Settings(
        database_url="postgresql://leadmail@db:5432/leadmail",
        host="0.0.0.0",
        port=9090,
        log_format="console",
        log_level="DEBUG",
        db_pool_min=1,
        db_pool_max=20,
        db_connect_timeout=2.5,
        db_command_timeout=60.0,
        max_body_bytes=65536,
        migrate_on_start=False,
    )
    assert not settings.is_sqlite
    assert isinstance(settings.port, int)
    assert isinstance(settings.db_command_timeout, float)


@pytest.mark.parametrize(
    "url",
    ["sqlite:///./leadmail.db", "sqlite:////var/lib/leadmail.db", "postgres://u@h/db"],
)
def test_accepted_database_urls(url: str) -> None:
    settings = Settings.from_env({"LEADMAIL_DATABASE_URL": url})

    assert settings.database_url == url
    assert settings.is_sqlite == url.startswith("sqlite:")


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "leadmail.db", "sqlite://relative.db", "http://db", "postgresql:/x"]
)
def test_unsupported_database_url_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_DATABASE_URL"):
        Settings.from_env({"LEADMAIL_DATABASE_URL": url})


def test_database_url_error_does_not_echo_the_url() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LEADMAIL_DATABASE_URL": "mysql://user:hunter2@db/leadmail"})

    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(("raw", "expected"), [("json", "json"), ("console", "console")])
def test_log_format(raw: str, expected: str) -> None:
    assert Settings.from_env({"LEADMAIL_LOG_FORMAT": raw}).log_format == expected


@pytest.mark.parametrize("raw", ["text", "JSONL", "pretty"])
def test_unknown_log_format_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_LOG_FORMAT"):
        Settings.from_env({"LEADMAIL_LOG_FORMAT": raw})


@pytest.mark.parametrize("level", ["debug", "INFO", "Warning", "ERROR", "critical"])
def test_log_level_is_upper_cased(level: str) -> None:
    assert Settings.from_env({"LEADMAIL_LOG_LEVEL": level}).log_level == level.upper()


def test_unknown_log_level_is_refused() -> None:
    # A typo must not silently become INFO (logs.configure_logging falls back to INFO).
    with pytest.raises(ConfigError, match="LEADMAIL_LOG_LEVEL"):
        Settings.from_env({"LEADMAIL_LOG_LEVEL": "DEBG"})


@pytest.mark.parametrize("port", ["1", "8080", "65535"])
def test_port(port: str) -> None:
    assert Settings.from_env({"LEADMAIL_PORT": port}).port == int(port)


@pytest.mark.parametrize("port", ["0", "-1", "65536", "http", "80.5", "8o"])
def test_bad_port_is_refused(port: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_PORT"):
        Settings.from_env({"LEADMAIL_PORT": port})


@pytest.mark.parametrize(
    "name", ["DB_POOL_MIN", "DB_POOL_MAX", "MAX_BODY_BYTES", "DB_CONNECT_TIMEOUT", "PORT"]
)
@pytest.mark.parametrize("raw", ["zero", "0", "-5", "1e3x"])
def test_bad_numbers_name_their_variable(name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name}"):
        Settings.from_env({f"LEADMAIL_{name}": raw})


@pytest.mark.parametrize("name", ["DB_POOL_MIN", "DB_POOL_MAX", "MAX_BODY_BYTES", "PORT"])
def test_whole_number_settings_refuse_fractions(name: str) -> None:
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name}"):
        Settings.from_env({f"LEADMAIL_{name}": "2.5"})


@pytest.mark.parametrize("name", ["DB_CONNECT_TIMEOUT", "DB_COMMAND_TIMEOUT"])
@pytest.mark.parametrize("raw", ["-inf", "0.0", "-0.5", "soon"])
def test_bad_timeouts_are_refused(name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name}"):
        Settings.from_env({f"LEADMAIL_{name}": raw})


@pytest.mark.parametrize("name", ["DB_CONNECT_TIMEOUT", "DB_COMMAND_TIMEOUT"])
def test_nan_timeout_is_refused(name: str) -> None:
    # float("nan") <= 0 is False, so NaN passes a plain positivity check.
    with pytest.raises(ConfigError, match=f"LEADMAIL_{name}"):
        Settings.from_env({f"LEADMAIL_{name}": "nan"})


def test_fractional_timeouts_are_kept() -> None:
    settings = Settings.from_env(
        {"LEADMAIL_DB_CONNECT_TIMEOUT": "0.25", "LEADMAIL_DB_COMMAND_TIMEOUT": "1.5"}
    )

    assert (settings.db_connect_timeout, settings.db_command_timeout) == (0.25, 1.5)


def test_pool_min_may_equal_pool_max() -> None:
    settings = Settings.from_env({"LEADMAIL_DB_POOL_MIN": "4", "LEADMAIL_DB_POOL_MAX": "4"})

    assert (settings.db_pool_min, settings.db_pool_max) == (4, 4)


@pytest.mark.parametrize(
    "env",
    [
        {"LEADMAIL_DB_POOL_MIN": "5", "LEADMAIL_DB_POOL_MAX": "4"},
        {"LEADMAIL_DB_POOL_MIN": "11"},  # above the default maximum
        {"LEADMAIL_DB_POOL_MAX": "1"},  # below the default minimum
    ],
)
def test_pool_min_above_pool_max_is_refused(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_DB_POOL_MIN") as caught:
        Settings.from_env(env)

    assert "LEADMAIL_DB_POOL_MAX" in str(caught.value)


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "yes", "on", " On "])
def test_migrate_on_start_true(raw: str) -> None:
    assert Settings.from_env({"LEADMAIL_MIGRATE_ON_START": raw}).migrate_on_start is True


@pytest.mark.parametrize("raw", ["0", "false", "False", "no", "off"])
def test_migrate_on_start_false(raw: str) -> None:
    assert Settings.from_env({"LEADMAIL_MIGRATE_ON_START": raw}).migrate_on_start is False


@pytest.mark.parametrize("raw", ["maybe", "2", "y", "enabled"])
def test_bad_flag_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_MIGRATE_ON_START"):
        Settings.from_env({"LEADMAIL_MIGRATE_ON_START": raw})


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize("raw", ["0", "0.0", "0.00", "0e0"])
def test_a_zero_key_cache_turns_it_off_however_zero_is_written(raw: str) -> None:
    assert Settings.from_env({"LEADMAIL_KEY_CACHE_SECONDS": raw}).key_cache_seconds == 0.0


@pytest.mark.parametrize("raw", ["-1", "nan", "inf"])
def test_a_negative_or_endless_key_cache_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_KEY_CACHE_SECONDS"):
        Settings.from_env({"LEADMAIL_KEY_CACHE_SECONDS": raw})


def test_a_blank_provider_key_is_no_key() -> None:
    env = {"LEADMAIL_EMAIL_PROVIDER": "resend", "LEADMAIL_EMAIL_API_KEY": "   "}

    with pytest.raises(ConfigError, match="LEADMAIL_EMAIL_API_KEY is required"):
        Settings.from_env(env).require_for("serve")


def _provider_env(provider: str, base_url: str, **extra: str) -> dict[str, str]:
    env = {
        "LEADMAIL_EMAIL_PROVIDER": provider,
        "LEADMAIL_EMAIL_API_KEY": "key-1",
        "LEADMAIL_EMAIL_DOMAIN": "mg.school.example",
        "LEADMAIL_EMAIL_BASE_URL": base_url,
    }
    env.update({f"LEADMAIL_{name}": value for name, value in extra.items()})
    return env


@pytest.mark.parametrize("provider", ["resend", "postmark", "sendgrid", "mailgun"])
def test_a_plain_http_provider_url_is_refused_naming_the_variable(provider: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(_provider_env(provider, "http://127.0.0.1:9999")).require_for("serve")

    text = str(caught.value)
    assert text.startswith("LEADMAIL_EMAIL_BASE_URL must be https://")
    assert "LEADMAIL_EMAIL_ALLOW_INSECURE=true" in text
    assert "\n" not in text  # one line
    assert "key-1" not in text


@pytest.mark.parametrize("raw", ["true", "1", "yes", "on"])
def test_allow_insecure_takes_a_plain_http_url(raw: str) -> None:
    env = _provider_env("resend", "http://127.0.0.1:9999/", EMAIL_ALLOW_INSECURE=raw)

    settings = Settings.from_env(env)

    assert settings.email_allow_insecure is True
    assert settings.email_base_url == "http://127.0.0.1:9999"


def test_https_needs_no_flag_and_the_flag_is_off_by_default() -> None:
    settings = Settings.from_env(_provider_env("mailgun", "https://api.eu.mailgun.net"))

    assert settings.email_allow_insecure is False
    assert Settings.from_env({}).email_allow_insecure is False
    assert Settings().email_allow_insecure is False


@pytest.mark.parametrize("base_url", ["", "http://mailpit:8025", "http://localhost:8025"])
def test_mailpit_takes_plain_http_without_the_flag(base_url: str) -> None:
    # Its own default is http://localhost:8025; a development inbox that delivers nowhere.
    env = {"LEADMAIL_EMAIL_PROVIDER": "mailpit", "LEADMAIL_EMAIL_BASE_URL": base_url}

    assert Settings.from_env(env).email_base_url == base_url


def test_a_bad_allow_insecure_value_is_refused() -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_EMAIL_ALLOW_INSECURE must be true or false"):
        Settings.from_env(_provider_env("resend", "https://x.example", EMAIL_ALLOW_INSECURE="ok"))


@pytest.mark.parametrize("raw", ["not an address", "hello@", "Acme <hello@acme.example", "a@b"])
def test_a_default_sender_that_is_no_address_is_refused_at_start(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LEADMAIL_EMAIL_DEFAULT_FROM": raw})

    text = str(caught.value)
    assert text.startswith(
        "LEADMAIL_EMAIL_DEFAULT_FROM must be an address such as hello@acme.example or"
        f" 'Acme Academy <hello@acme.example>', got {raw!r}, which is not a valid"
    )
    assert "\n" not in text


@pytest.mark.parametrize("raw", ["hello@acme.example", "Acme Academy <hello@acme.example>"])
def test_a_default_sender_a_request_could_give_is_taken(raw: str) -> None:
    assert Settings.from_env({"LEADMAIL_EMAIL_DEFAULT_FROM": raw}).email_default_from == raw


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"LEADMAIL_EMAIL_PROVIDER": "resend"}, "LEADMAIL_EMAIL_API_KEY"),
        ({"LEADMAIL_EMAIL_PROVIDER": "mailgun", "LEADMAIL_EMAIL_API_KEY": "k"}, "EMAIL_DOMAIN"),
        (_provider_env("postmark", "http://127.0.0.1:9"), "LEADMAIL_EMAIL_BASE_URL"),
    ],
)
def test_what_the_provider_needs_is_required_only_by_the_commands_that_send(
    env: dict[str, str], variable: str
) -> None:
    settings = Settings.from_env(env)  # migrate, keys, accounts: they send nothing

    for command in ("serve", "worker"):
        with pytest.raises(ConfigError, match=variable):
            settings.require_for(command)


def test_retention_defaults_to_90_days_purged_hourly() -> None:
    settings = Settings.from_env({})

    assert (settings.retention_days, settings.retention_schedule) == (90, "17 * * * *")


@pytest.mark.parametrize(("raw", "days"), [("0", 0), ("30", 30), (" 365 ", 365)])
def test_retention_days_are_read_and_0_keeps(raw: str, days: int) -> None:
    assert Settings.from_env({"LEADMAIL_RETENTION_DAYS": raw}).retention_days == days


@pytest.mark.parametrize("raw", ["-1", "ninety", "1.5", "inf"])
def test_bad_retention_days_are_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_RETENTION_DAYS"):
        Settings.from_env({"LEADMAIL_RETENTION_DAYS": raw})


@pytest.mark.parametrize("raw", ["0 3 * * *", "*/5 * * * *", "* * * * * */2"])
def test_a_retention_schedule_is_a_cron_expression(raw: str) -> None:
    assert Settings.from_env({"LEADMAIL_RETENTION_SCHEDULE": raw}).retention_schedule == raw


@pytest.mark.parametrize("raw", ["hourly", "61 * * * *", "* * *", "* * * * * * 2026"])
def test_a_malformed_retention_schedule_is_refused_with_an_example(raw: str) -> None:
    with pytest.raises(
        ConfigError, match=r"LEADMAIL_RETENTION_SCHEDULE .* e\.g\. '17 \* \* \* \*'"
    ):
        Settings.from_env({"LEADMAIL_RETENTION_SCHEDULE": raw})
