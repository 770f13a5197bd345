"""Sender domains as an operator manages them (`leadmail accounts senders`), and a change
made by the CLI obeyed by a running server within 10 s, with no restart.

Runs on the session's shared servers (SQLite and Postgres), each test with new accounts."""

from __future__ import annotations

import json
import time

import httpx

from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer
from tests.support.envelope import SEND, assert_error, ok_data

PROPAGATION_S = 10.0  # the README's promise
POLL_S = 0.25


def send_from(api: httpx.Client, sender: str) -> httpx.Response:
    return api.post(
        SEND,
        json={"to": "ada@example.com", "subject": "Hello", "from": sender, "html": "<p>Hi</p>"},
    )


def first_answer_with(
    api: httpx.Client, sender: str, status: int, since: float
) -> tuple[httpx.Response, float]:
    """Send from ``sender`` until the answer has ``status`` (within the promise and a
    margin); that answer, and the seconds from ``since`` to when it came."""
    while True:
        response = send_from(api, sender)
        waited = time.monotonic() - since
        if response.status_code == status or waited > PROPAGATION_S + 5:
            return response, waited
        time.sleep(POLL_S)


def test_senders_add_list_and_remove(server: LeadmailServer) -> None:
    account = new_name("senders")
    server.create_keys(account)

    added = server.cli("accounts", "senders", "add", account, " School.Example.com ")
    again = server.cli("accounts", "senders", "add", account, "school.example.com")
    other = server.cli("accounts", "senders", "add", account, "news.example.org")
    listed = server.cli("accounts", "senders", "list", account)
    as_json = server.cli("accounts", "senders", "list", account, "--json")

    for result in (added, again, other, listed, as_json):
        assert result.returncode == 0, result.describe()
    assert "Added sender domain school.example.com" in added.stdout, added.describe()
    assert "already has sender domain school.example.com" in again.stdout, again.describe()
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert [row[0] for row in rows] == ["domain", "news.example.org", "school.example.com"]
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [r["domain"] for r in records] == ["news.example.org", "school.example.com"]
    assert all(r["created_at"].endswith("Z") for r in records)

    removed = server.cli("accounts", "senders", "remove", account, "NEWS.example.org")
    missing = server.cli("accounts", "senders", "remove", account, "news.example.org")
    last = server.cli("accounts", "senders", "remove", account, "school.example.com")
    empty = server.cli("accounts", "senders", "list", account)

    assert removed.returncode == 0, removed.describe()
    assert "Removed sender domain news.example.org" in removed.stdout
    assert missing.returncode == 1, missing.describe()
    assert "has no sender domain news.example.org" in missing.stderr
    assert last.returncode == 0, last.describe()
    assert "LEADMAIL_ALLOWED_SENDER_DOMAINS applies to it again" in last.stdout
    assert (empty.returncode, empty.stdout) == (0, ""), empty.describe()
    assert "no sender domains" in empty.stderr


def test_a_bad_domain_or_an_unknown_account_is_exit_2_on_one_line(
    server: LeadmailServer,
) -> None:
    account = new_name("senders-bad")
    server.create_keys(account)

    results = [
        server.cli("accounts", "senders", "add", account, "hello@school.example.com"),
        server.cli("accounts", "senders", "add", account, "not a domain"),
        server.cli("accounts", "senders", "remove", account, "localhost"),
        server.cli("accounts", "senders", "add", new_name("nobody"), "school.example.com"),
        server.cli("accounts", "senders", "list", new_name("nobody")),
    ]

    for result in results:
        assert result.returncode == 2, result.describe()
        assert result.stdout == "", result.describe()
        said = [line for line in result.stderr.splitlines() if line.startswith("leadmail: ")]
        assert len(said) == 1, result.describe()
    assert "is not a host name" in results[0].stderr
    assert "no account named" in results[3].stderr
    listed = server.cli("accounts", "senders", "list", account, "--json")
    assert (listed.returncode, listed.stdout) == (0, ""), listed.describe()


def test_a_change_by_the_cli_reaches_the_running_server_within_10_s(
    server: LeadmailServer,
) -> None:
    account = new_name("senders-live")
    [key] = server.create_keys(account)
    sender = "Academy <hello@academy.example.com>"
    with server.client(key.secret) as api:
        assert ok_data(send_from(api, sender))["status"] == "sent"  # none: any sender

        added = server.cli("accounts", "senders", "add", account, "school.example.com")
        assert added.returncode == 0, added.describe()
        refused, waited = first_answer_with(api, sender, 403, since=time.monotonic())

        assert_error(refused, 403, "SENDER_NOT_ALLOWED")
        assert waited <= PROPAGATION_S, f"refused only after {waited:.1f} s"
        assert ok_data(send_from(api, "hello@school.example.com"))["status"] == "sent"

        removed = server.cli("accounts", "senders", "remove", account, "school.example.com")
        assert removed.returncode == 0, removed.describe()
        allowed, waited = first_answer_with(api, sender, 200, since=time.monotonic())

        assert ok_data(allowed)["status"] == "sent"
        assert waited <= PROPAGATION_S, f"allowed again only after {waited:.1f} s"
