"""The ``leadmail`` command on the embedded default (a SQLite file), as an operator uses it."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import cli_env, run_cli, run_cli_jobs, run_cli_parallel
from tests.e2e.keys import create_keys, issued_key
from tests.e2e.names import new_name
from tests.support.network import free_port


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every non-blank line parsed as one JSON object (fails on any other line)."""
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.strip():
            record = json.loads(line)
            assert isinstance(record, dict), line
            records.append(record)
    return records


def is_timestamp(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'leadmail.db'}"


def test_migrate_twice_applies_then_has_nothing_to_apply(database_url: str, tmp_path: Path) -> None:
    env = cli_env(database_url)
    first = run_cli(["migrate"], env, tmp_path)
    assert first.returncode == 0, first.describe()
    assert "applied" in first.stdout.lower(), first.describe()
    json_lines(first.stderr)  # logs, if any, are JSON lines on stderr

    second = run_cli(["migrate"], env, tmp_path)
    assert second.returncode == 0, second.describe()
    assert "nothing to apply" in second.stdout.lower(), second.describe()
    assert second.stdout.strip() != first.stdout.strip()


def test_keys_create_prints_the_key_alone_on_the_last_line(
    database_url: str, tmp_path: Path
) -> None:
    result = run_cli(
        ["keys", "create", "--account", "acme-academy", "--label", "website form"],
        cli_env(database_url),
        tmp_path,
    )
    key = issued_key(result, "acme-academy")
    lines = result.stdout.splitlines()
    assert lines[-1] == key.secret
    assert all(key.secret not in line for line in lines[:-1]), result.describe()
    # stdout is the command's output, not logs; logs are JSON lines on stderr.
    for line in lines:
        with pytest.raises(json.JSONDecodeError):
            json.loads(line)
    records = json_lines(result.stderr)
    # The empty database was migrated on the way, and that was logged on stderr.
    assert any(r.get("event") == "migrations_applied" for r in records), result.describe()
    assert key.secret not in result.stderr


def test_keys_list_shows_metadata_and_never_the_key(database_url: str, tmp_path: Path) -> None:
    env = cli_env(database_url)
    school, other = new_name("school"), new_name("other")
    [first] = create_keys(database_url, tmp_path, school, label="website form")
    second_result, other_result, revoked = run_cli_parallel(
        [
            ["keys", "create", "--account", school, "--label", "backup"],
            ["keys", "create", "--account", other],
            ["keys", "revoke", first.key_id],
        ],
        env,
        tmp_path,
    )
    second, stranger = issued_key(second_result, school), issued_key(other_result, other)
    assert revoked.returncode == 0, revoked.describe()

    table, as_json, filtered = run_cli_parallel(
        [["keys", "list"], ["keys", "list", "--json"], ["keys", "list", "--account", school]],
        env,
        tmp_path,
    )
    secrets = [first.secret, second.secret, stranger.secret]
    for result in (table, as_json, filtered):
        assert result.returncode == 0, result.describe()
        for secret in secrets:
            assert secret not in result.stdout
            assert secret not in result.stderr

    header, *rows = table.stdout.splitlines()
    for column in ("id", "account", "label", "prefix", "created", r"last.used", "revoked"):
        assert re.search(column, header, re.IGNORECASE), f"no {column!r} column: {header!r}"
    assert len(rows) == 3, table.describe()
    by_id = {row.split()[0]: row for row in rows}
    assert set(by_id) == {first.key_id, second.key_id, stranger.key_id}, table.describe()
    assert school in by_id[first.key_id]
    assert "website form" in by_id[first.key_id]
    assert other in by_id[stranger.key_id]

    records = {r["key_id"]: r for r in json_lines(as_json.stdout)}
    assert set(records) == {first.key_id, second.key_id, stranger.key_id}
    for key in (first, second, stranger):
        record = records[key.key_id]
        assert {"account", "label", "prefix", "created", "last_used", "revoked"} <= set(record)
        assert record["account"] == key.account
        assert key.secret.startswith(record["prefix"])
        assert record["prefix"] != key.secret
        assert record["prefix"] in by_id[key.key_id]  # the table shows the prefix too
        assert is_timestamp(record["created"])
    assert records[first.key_id]["label"] == "website form"
    assert is_timestamp(records[first.key_id]["revoked"])
    assert not is_timestamp(records[second.key_id]["revoked"])
    assert not is_timestamp(records[second.key_id]["last_used"])  # never used yet

    filtered_rows = filtered.stdout.splitlines()[1:]
    assert {row.split()[0] for row in filtered_rows} == {first.key_id, second.key_id}


def test_revoking_an_unknown_key_fails_with_a_message(database_url: str, tmp_path: Path) -> None:
    assert run_cli(["migrate"], cli_env(database_url), tmp_path).returncode == 0
    result = run_cli(["keys", "revoke", "key_doesnotexist"], cli_env(database_url), tmp_path)
    assert result.returncode != 0, result.describe()
    assert "key_doesnotexist" in result.stderr, result.describe()
    assert result.stdout == "", result.describe()


PLAIN_HTTP_PROVIDER = {
    "LEADMAIL_EMAIL_PROVIDER": "resend",
    "LEADMAIL_EMAIL_API_KEY": "re_plain_http_key",
    "LEADMAIL_EMAIL_BASE_URL": "http://127.0.0.1:9",
}


def test_bad_configuration_exits_2_naming_the_variable(database_url: str, tmp_path: Path) -> None:
    cases: list[tuple[list[str], dict[str, str], str]] = [
        (["serve", "--port", str(free_port())], {"LEADMAIL_LOG_FORMAT": "xml"}, "LOG_FORMAT"),
        (["migrate"], {"LEADMAIL_LOG_FORMAT": "xml"}, "LOG_FORMAT"),
        (["keys", "list"], {"LEADMAIL_DB_CONNECT_TIMEOUT": "soon"}, "DB_CONNECT_TIMEOUT"),
        # A provider reached over plain HTTP, without LEADMAIL_EMAIL_ALLOW_INSECURE.
        (["serve", "--port", str(free_port())], PLAIN_HTTP_PROVIDER, "EMAIL_BASE_URL"),
    ]
    results = run_cli_jobs(
        [(args, cli_env(database_url, extra)) for args, extra, _ in cases], tmp_path
    )
    for (_, _, variable), result in zip(cases, results, strict=True):
        assert result.returncode == 2, result.describe()
        assert f"LEADMAIL_{variable}" in result.stderr, result.describe()
        assert result.stderr.count("\n") == 1, result.describe()
        assert result.stdout == "", result.describe()
    assert PLAIN_HTTP_PROVIDER["LEADMAIL_EMAIL_API_KEY"] not in "".join(r.stderr for r in results)
    # Nothing was started or created.
    assert not (tmp_path / "leadmail.db").exists()


@pytest.mark.postgres
def test_on_postgres_serve_and_worker_refuse_to_start_without_their_link_settings(
    postgres_server: str, tmp_path: Path
) -> None:
    no_key = {k: v for k, v in cli_env(postgres_server).items() if k != "LEADMAIL_SECRET_KEY"}
    keyed = cli_env(postgres_server)
    assert "LEADMAIL_PUBLIC_URL" not in keyed
    cases: list[tuple[list[str], dict[str, str], str]] = [
        (["serve", "--port", str(free_port())], no_key, "LEADMAIL_SECRET_KEY"),
        (["worker"], no_key, "LEADMAIL_SECRET_KEY"),
        (["worker"], keyed, "LEADMAIL_PUBLIC_URL"),
    ]

    results = run_cli_jobs([(args, env) for args, env, _ in cases], tmp_path)

    for (_, _, variable), result in zip(cases, results, strict=True):
        assert result.returncode == 2, result.describe()
        assert result.stderr.count("\n") == 1, result.describe()
        assert result.stderr.startswith(f"leadmail: configuration error: {variable} is required")
        assert result.stdout == "", result.describe()
    assert keyed["LEADMAIL_SECRET_KEY"] not in "".join(r.stderr for r in results)
