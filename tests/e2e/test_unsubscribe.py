"""One-click unsubscribe with the real ``leadmail serve``: the link a send carries (read
where the console provider prints it at DEBUG: its info line hides the token, which holds
the address), GET never unsubscribing, POST unsubscribing from that account so the next
send is suppressed; and on SQLite the links outlive a restart."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.cli import TEST_SECRET_KEY
from tests.e2e.logs import assert_not_logged, log_records, wait_for
from tests.e2e.mail import SENDER
from tests.e2e.names import new_email
from tests.e2e.server import LeadmailServer, server_with_key
from tests.support.envelope import SEND, SUPPRESSIONS, assert_error, ok_data

ONE_CLICK = {"List-Unsubscribe": "One-Click"}
DEBUG = {"LEADMAIL_LOG_LEVEL": "DEBUG"}  # the console provider's line with the whole link


@pytest.fixture
def server(own_database_url: str, tmp_path: Path) -> Iterator[LeadmailServer]:
    """A server of its own that logs at DEBUG."""
    sqlite = own_database_url.startswith("sqlite:")
    with server_with_key(own_database_url, tmp_path, extra_env=DEBUG, key_first=sqlite) as running:
        yield running


def console_headers(server: LeadmailServer, message_id: str) -> dict[str, str]:
    """The headers the console provider printed for the message."""
    found: list[dict[str, Any]] = []

    def printed() -> bool:
        found[:] = [
            r
            for r in log_records(server)
            if r.get("event") == "email.console.headers" and r.get("message_id") == message_id
        ]
        return bool(found)

    wait_for("the console line of the message", printed)
    headers: dict[str, str] = found[0]["headers"]
    return headers


def send_with_link(server: LeadmailServer, api: httpx.Client, to: str) -> str:
    """Send to ``to`` with list_unsubscribe; the link its List-Unsubscribe names."""
    body = {"to": to, "subject": "News", "from": SENDER, "html": "<p>Hi</p>"}
    message = ok_data(api.post(SEND, json={**body, "list_unsubscribe": True}))
    headers = console_headers(server, message["id"])
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = headers["List-Unsubscribe"]
    # `serve` without LEADMAIL_PUBLIC_URL: links point where it listens.
    assert link.startswith(f"<{server.base_url}/u/"), link
    assert link.endswith(">"), link
    return link[1:-1]


def suppressed(api: httpx.Client) -> list[tuple[str, str]]:
    items = ok_data(api.get(SUPPRESSIONS, params={"limit": 100}))["items"]
    return [(e["email"], e["reason"]) for e in items]


def test_post_unsubscribes_get_never_does(server: LeadmailServer) -> None:
    [mine, other] = server.keys_for("unsub-mine", "unsub-other")
    to = new_email("unsub")
    with server.client(mine.secret) as api, server.client(other.secret) as others:
        link = send_with_link(server, api, to)
        with httpx.Client(timeout=10) as browser:  # no API key
            for _ in range(2):  # a mail scanner follows the link: nothing changes
                page = browser.get(link)
                assert page.status_code == 200, page.text
                assert page.headers["content-type"].startswith("text/html")
                assert 'name="List-Unsubscribe" value="One-Click"' in page.text
            assert suppressed(api) == []

            done = browser.post(link, data=ONE_CLICK)  # as a mail client's one click
            again = browser.post(link, data=ONE_CLICK)
            bad = browser.post(link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB"))

        assert done.status_code == again.status_code == 200, done.text
        assert "You are unsubscribed" in done.text
        assert bad.status_code == 400
        assert "not valid" in bad.text
        assert suppressed(api) == [(to, "unsubscribed")]
        body = {"to": to, "subject": "More news", "from": SENDER, "html": "<p>Hi</p>"}
        assert_error(api.post(SEND, json=body), 422, "RECIPIENT_SUPPRESSED")
        # Another account may still mail the address.
        assert ok_data(others.post(SEND, json=body))["status"] == "sent"
        assert suppressed(others) == []
    if not server.database_url.startswith("sqlite:"):
        assert_not_logged(server, "the secret key", TEST_SECRET_KEY)


def test_on_sqlite_a_link_outlives_a_restart(tmp_path: Path) -> None:
    database = tmp_path / "leadmail.db"
    url = f"sqlite:///{database}"
    to = new_email("restart")
    with server_with_key(url, tmp_path, extra_env=DEBUG) as first:
        assert first.primary is not None
        secret = first.primary.secret
        with first.client(secret) as api:
            link = send_with_link(first, api, to)
    with sqlite3.connect(database) as db:
        [(key,)] = db.execute(
            "SELECT value FROM installation_secrets WHERE name = 'unsubscribe_key'"
        ).fetchall()
    assert len(key.encode()) >= 32
    assert_not_logged(first, "the generated key", key)

    with server_with_key(url, tmp_path, extra_env=DEBUG, name="again") as again:
        path = link.partition("/u/")[2]
        # The port changed; the token did not, and is still this installation's.
        with httpx.Client(timeout=10) as browser:
            done = browser.post(f"{again.base_url}/u/{path}", data=ONE_CLICK)
        assert done.status_code == 200, done.text
        with again.client(secret) as api:
            assert suppressed(api) == [(to, "unsubscribed")]
        assert_not_logged(again, "the generated key", key)


def test_the_info_line_of_a_send_hides_the_links_token(server: LeadmailServer) -> None:
    """The token is the address in base64: never in a line logged at INFO."""
    [key] = server.keys_for("unsub-info")
    to = new_email("unsub-info")
    with server.client(key.secret) as api:
        link = send_with_link(server, api, to)
    token = link.partition("/u/")[2]
    info = [r for r in log_records(server) if r.get("event") == "email.console"]
    assert info, server.stderr()
    assert all(token not in str(r) for r in info)
    assert any("/u/(hidden" in str(r.get("headers")) for r in info), info
