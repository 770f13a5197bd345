"""The access log of the email endpoints: one line per request, and never a body, a
variable value or an address in it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from tests.api.support import Api, recorder, welcome_email
from tests.api.test_logging import json_logs
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import MESSAGES, SEND, SEND_TEMPLATE, TEMPLATE, TEMPLATES

HTML = "<p>Private body: enrolment number 8812-ALPHA</p>"
SUBJECT = "Private subject 4471"
RECIPIENTS = ["secret.recipient@example.com", "Hidden Person <hidden.person@example.com>"]
SENDER = "covert.sender@example.com"
VALUES = {
    **WELCOME_VARIABLES,
    "first_name": "Zebulon-Variable-Value",
    "courses_link": "https://example.com/private-token-93311",
}


def _requests(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("event") == "request"]


async def test_the_log_never_holds_bodies_variable_values_or_addresses(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = {"to": RECIPIENTS, "subject": SUBJECT, "from": SENDER, "html": HTML}
    template = welcome_email(to=RECIPIENTS, variables=VALUES, **{"from": SENDER})
    with json_logs(capsys, monkeypatch) as read:
        sent = await api.client.post(SEND, json=plain, headers=api.auth)
        await api.client.post(TEMPLATE, json=template, headers=api.auth)
        await api.client.post(
            SEND_TEMPLATE, json=template, headers={**api.auth, "Idempotency-Key": "log-key-5521"}
        )
        recorder(api).fail_next(ProviderRejected(422, "Invalid 'To' address"))
        await api.client.post(SEND, json=plain, headers=api.auth)
        recorder(api).fail_for("secret.recipient@example.com", ProviderUnavailable("mailbox down"))
        await api.client.post(TEMPLATE, json=template, headers=api.auth)
        await api.client.post(
            TEMPLATE,
            json={**template, "variables": {"first_name": VALUES["first_name"]}},
            headers=api.auth,
        )
        await api.client.post(SEND, json={**plain, "to": ["not-an-address"]}, headers=api.auth)
        await api.client.get(f"{MESSAGES}/{sent.json()['data']['id']}", headers=api.auth)
        await api.client.get(TEMPLATES, headers=api.auth)
        events = read()

    lines = _requests(events)
    assert [line["status"] for line in lines] == [200, 200, 200, 502, 503, 422, 422, 200, 200]
    assert {line["route"] for line in lines} == {
        SEND,
        TEMPLATE,
        SEND_TEMPLATE,
        MESSAGES + "/{message_id}",
        TEMPLATES,
    }
    assert all(line["account_id"] == api.account_id for line in lines)
    text = json.dumps(events)
    secrets = [
        HTML,
        "8812-ALPHA",
        SUBJECT,
        SENDER,
        "secret.recipient",
        "hidden.person",
        "Hidden Person",
        "not-an-address",
        "Zebulon-Variable-Value",
        "private-token-93311",
        "log-key-5521",
        sent.json()["data"]["id"],
    ]
    for secret in secrets:
        assert secret.lower() not in text.lower(), secret
