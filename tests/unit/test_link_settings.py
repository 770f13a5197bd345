"""LEADMAIL_SECRET_KEY and LEADMAIL_PUBLIC_URL: read, checked (the key never repeated),
and what `serve` and `worker` cannot start without."""

from __future__ import annotations

import pytest

from leadmail.config import ConfigError, Settings

POSTGRES = {"LEADMAIL_DATABASE_URL": "postgresql://leadmail@db:5432/leadmail"}
KEY = "0123456789abcdef0123456789abcdef"  # 32 bytes


def test_both_are_read() -> None:
    settings = Settings.from_env(
        {"LEADMAIL_SECRET_KEY": KEY, "LEADMAIL_PUBLIC_URL": " https://mail.school.example/ "}
    )

    assert settings.secret_key == KEY
    assert settings.public_url == "https://mail.school.example"
    assert settings.link_base() == "https://mail.school.example"
    assert KEY not in repr(settings)


def test_neither_is_needed_to_read_the_settings() -> None:
    settings = Settings.from_env({})

    assert (settings.secret_key, settings.public_url) == ("", "")


def test_a_key_under_32_bytes_is_refused_without_repeating_it() -> None:
    short = "s3cr3t-but-too-short-123456789"  # 30 bytes

    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LEADMAIL_SECRET_KEY": short})

    assert "LEADMAIL_SECRET_KEY must be at least 32 bytes" in str(caught.value)
    assert short not in str(caught.value)
    # Bytes, not characters: 16 two-byte characters are enough.
    assert Settings.from_env({"LEADMAIL_SECRET_KEY": "é" * 16}).secret_key == "é" * 16


@pytest.mark.parametrize("url", ["mail.school.example", "ftp://mail.school.example", "/u"])
def test_a_public_url_must_be_http(url: str) -> None:
    with pytest.raises(ConfigError, match="LEADMAIL_PUBLIC_URL must start with http"):
        Settings.from_env({"LEADMAIL_PUBLIC_URL": url})


@pytest.mark.parametrize(
    ("host", "port", "base"),
    [
        ("127.0.0.1", 8000, "http://127.0.0.1:8000"),
        ("mail.internal", 9090, "http://mail.internal:9090"),
        ("0.0.0.0", 8000, "http://127.0.0.1:8000"),  # every interface: one that answers
        ("::", 8000, "http://127.0.0.1:8000"),
        ("::1", 8080, "http://[::1]:8080"),
    ],
)
def test_without_a_public_url_links_point_where_the_server_listens(
    host: str, port: int, base: str
) -> None:
    assert Settings(host=host, port=port).link_base() == base


def test_on_sqlite_serve_and_worker_need_neither() -> None:
    settings = Settings.from_env({})

    settings.require_for("serve")
    settings.require_for("worker")


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_on_postgres_serve_and_worker_need_the_key(command: str) -> None:
    settings = Settings.from_env({**POSTGRES, "LEADMAIL_PUBLIC_URL": "https://x.example"})

    with pytest.raises(ConfigError) as caught:
        settings.require_for(command)  # type: ignore[arg-type]

    assert str(caught.value).startswith(
        f"LEADMAIL_SECRET_KEY is required on Postgres for `leadmail {command}`"
    )
    assert "\n" not in str(caught.value)


def test_on_postgres_a_worker_needs_the_public_url_and_serve_does_not() -> None:
    settings = Settings.from_env({**POSTGRES, "LEADMAIL_SECRET_KEY": KEY})

    settings.require_for("serve")
    with pytest.raises(ConfigError, match="LEADMAIL_PUBLIC_URL is required on Postgres"):
        settings.require_for("worker")
    with_url = Settings.from_env(
        {**POSTGRES, "LEADMAIL_SECRET_KEY": KEY, "LEADMAIL_PUBLIC_URL": "https://x.example"}
    )
    with_url.require_for("worker")
