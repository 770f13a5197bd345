"""The console provider, the default when no provider is configured: nothing is delivered,
the server says so loudly, and a sent message is logged without its body.

Runs on the session's shared servers (SQLite and Postgres), which set no provider.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.e2e.keys import IssuedKey
from tests.e2e.logs import assert_not_logged, log_records, wait_for
from tests.e2e.mail import SENDER
from tests.e2e.names import new_email
from tests.e2e.server import LeadmailServer
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import MESSAGES, SEND, SEND_TEMPLATE, TEMPLATE, ok_data


def console_records(server: LeadmailServer, message_id: str) -> list[dict[str, Any]]:
    return [
        r
        for r in log_records(server)
        if r.get("event") == "email.console" and r.get("message_id") == message_id
    ]


def test_start_up_warns_that_email_is_not_delivered(server: LeadmailServer) -> None:
    warnings = [
        r
        for r in log_records(server)
        if r.get("level") in ("warning", "error", "critical") and "not delivered" in str(r).lower()
    ]
    assert warnings, f"no warning that email is not delivered:\n{server.stderr()}"
    assert any("console" in str(r).lower() for r in warnings), warnings


def test_a_console_send_is_logged_without_its_body(
    server: LeadmailServer, primary_key: IssuedKey
) -> None:
    marker = uuid.uuid4().hex
    html = f"<p>Private note for the student: {marker}</p>"
    body = {"to": new_email("console"), "subject": "Console", "from": SENDER, "html": html}
    with server.client(primary_key.secret) as api:
        data = ok_data(api.post(SEND, json=body))
        logged = ok_data(api.get(f"{MESSAGES}/{data['id']}"))

    assert data["provider"] == "console", data
    assert data["status"] == "sent", data
    assert data["provider_message_id"].startswith("console-"), data
    assert logged == data
    wait_for(
        "a console log line for the message",
        lambda: len(console_records(server, data["id"])) == 1,
    )
    assert_not_logged(server, "the email's HTML body", html, marker)


def test_a_console_template_send_is_logged_without_its_body(
    server: LeadmailServer, primary_key: IssuedKey
) -> None:
    marker = uuid.uuid4().hex  # only in the body: courses_link is not in the subject
    recipients = [new_email("console-a"), new_email("console-b")]
    body = {
        "to": recipients,
        "template_id": "welcome",
        "variables": {
            **WELCOME_VARIABLES,
            "courses_link": f"https://academy.example.com/courses/{marker}",
        },
        "from": SENDER,
    }
    with server.client(primary_key.secret) as api:
        messages = ok_data(api.post(TEMPLATE, json=body))["messages"]
        # The spec's samples: the /send-template path, and `to` as one string.
        single = new_email("console-c")
        [alone] = ok_data(api.post(SEND_TEMPLATE, json={**body, "to": single}))["messages"]

    assert [m["to"] for m in messages] == [[r] for r in recipients]
    assert alone["to"] == [single]
    messages.append(alone)
    for message in messages:
        assert message["provider"] == "console", message
        assert message["status"] == "sent", message
        assert message["provider_message_id"].startswith("console-"), message
    wait_for(
        "a console log line for each message",
        lambda: all(len(console_records(server, m["id"])) == 1 for m in messages),
    )
    assert_not_logged(server, "the rendered template body", marker)
