"""A provider that does not answer: each attempt is cut at LEADMAIL_EMAIL_TIMEOUT and the
whole request at LEADMAIL_EMAIL_DEADLINE, so a client never waits longer than that.

The server sends through Resend (at the stand-in) with the default number of attempts, so
the deadline, not the attempt count, is what ends a send to a provider that hangs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping

import httpx
import pytest

from tests.e2e.logs import assert_not_logged
from tests.e2e.mail import SENDER, EmailRig, delivered, email_rig
from tests.e2e.names import new_email
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import MESSAGES, SEND, TEMPLATE, assert_error, ok_data

TIMEOUT_S = 1.0
DEADLINE_S = 3.0
# What a client may wait beyond the deadline: the answer's own way back, on a busy machine.
SLACK_S = 1.0


@pytest.fixture(scope="module")
def hanging(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmailRig]:
    workdir = tmp_path_factory.mktemp("email-timeouts")
    database_url = f"sqlite:///{workdir / 'leadmail.db'}"
    with email_rig(
        "resend",
        database_url,
        workdir,
        name="timeouts",
        EMAIL_TIMEOUT=f"{TIMEOUT_S:g}",
        EMAIL_DEADLINE=f"{DEADLINE_S:g}",
    ) as rig:
        yield rig


@pytest.fixture
def rig(hanging: EmailRig) -> EmailRig:
    hanging.standin.reset()
    return hanging


def timed_post(
    api: httpx.Client, path: str, body: Mapping[str, object]
) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = api.post(path, json=body)
    return response, time.monotonic() - started


def test_a_hanging_provider_is_503_within_the_deadline_and_logged_failed(
    rig: EmailRig,
) -> None:
    rig.standin.hang_next(100)
    body = {"to": new_email("wait"), "subject": "Hang", "from": SENDER, "html": "<p>h</p>"}
    with rig.client() as api:
        response, elapsed = timed_post(api, SEND, body)
        error = assert_error(response, 503, "PROVIDER_UNAVAILABLE")
        assert elapsed < DEADLINE_S + SLACK_S, f"the client waited {elapsed:.2f} s"
        assert elapsed >= TIMEOUT_S, f"answered in {elapsed:.2f} s: no attempt timed out?"
        message_id = error["data"]["id"]
        logged = ok_data(api.get(f"{MESSAGES}/{message_id}"))

    assert logged["status"] == "failed", logged
    assert logged["attempts"] >= 1, logged
    assert logged["last_error"], logged
    assert logged["provider_message_id"] is None
    assert logged == error["data"]
    requests = rig.standin.requests
    assert all(r.answer == "hang" for r in requests), requests
    # Every attempt counted is a request the provider saw, but for the last, which the
    # deadline may cut before its request has all arrived (seen on a loaded machine); more
    # than one fits in 3 s.
    assert logged["attempts"] >= 2, logged
    assert logged["attempts"] - 1 <= len(requests) <= logged["attempts"], (requests, logged)


def test_a_template_send_to_a_hanging_provider_ends_at_one_deadline(rig: EmailRig) -> None:
    """Recipients are sent concurrently: three hanging messages cost one deadline, not three."""
    rig.standin.hang_next(100)
    recipients = [new_email("h1"), new_email("h2"), new_email("h3")]
    body = {
        "to": recipients,
        "template_id": "welcome",
        "variables": WELCOME_VARIABLES,
        "from": SENDER,
    }
    with rig.client() as api:
        response, elapsed = timed_post(api, TEMPLATE, body)
    error = assert_error(response, 503, "PROVIDER_UNAVAILABLE")
    assert elapsed < DEADLINE_S + SLACK_S, f"the client waited {elapsed:.2f} s"
    messages = error["data"]["messages"]
    assert [m["to"] for m in messages] == [[r] for r in recipients]
    assert all(m["status"] == "failed" and m["attempts"] >= 1 for m in messages), messages
    # As above: each message's last attempt may be cut before the provider saw all of it.
    attempts = sum(m["attempts"] for m in messages)
    seen = len(rig.standin.requests)
    assert attempts - len(messages) <= seen <= attempts, (seen, messages)


def test_one_timed_out_attempt_is_retried_under_the_same_provider_idempotency_key(
    rig: EmailRig,
) -> None:
    rig.standin.hang_next(1)
    body = {"to": new_email("late"), "subject": "Late", "from": SENDER, "html": "<p>l</p>"}
    with rig.client() as api:
        response, elapsed = timed_post(api, SEND, body)
    data = ok_data(response)
    assert elapsed >= TIMEOUT_S, f"answered in {elapsed:.2f} s: the hang was not waited out"
    assert data["status"] == "sent"
    assert data["attempts"] == 2, data
    hung, answered = rig.standin.requests
    assert (hung.answer, answered.answer) == ("hang", "200")
    assert data["provider_message_id"] == answered.provider_id
    # Resend deduplicates on Idempotency-Key: both attempts carry the message's id, so
    # one that was in fact delivered late is not delivered twice.
    assert hung.header("idempotency-key") == answered.header("idempotency-key") == data["id"]
    assert delivered(hung) == delivered(answered)


def test_a_dropped_connection_is_retried(rig: EmailRig) -> None:
    rig.standin.drop_next(1)
    body = {"to": new_email("drop"), "subject": "Drop", "from": SENDER, "html": "<p>d</p>"}
    with rig.client() as api:
        data = ok_data(api.post(SEND, json=body))
    assert data["attempts"] == 2, data
    assert [r.answer for r in rig.standin.requests] == ["drop", "200"]


def test_the_provider_key_is_never_logged(rig: EmailRig) -> None:
    """Last in the module: everything the server wrote for the sends above."""
    assert_not_logged(rig.server, "the provider API key", rig.api_key)
