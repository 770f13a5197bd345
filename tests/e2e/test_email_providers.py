"""Every HTTP email provider, end to end: ``leadmail serve`` configured for the provider,
its base URL pointed at the stand-in (a real local HTTP server answering as the provider
does, auth checked), driven over HTTP with a key made by ``leadmail keys create``.

One server per provider (module-scoped) on SQLite, and Resend once more on Postgres. The
stand-in is reset before each test, so each test counts only its own requests.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.e2e.logs import assert_not_logged, wait_for
from tests.e2e.mail import EmailRig, delivered, email_rig, provider_path
from tests.e2e.names import new_email, new_name
from tests.postgres import fresh_database
from tests.support.envelope import MESSAGES, SEND, TEMPLATE, assert_error, ok_data
from tests.support.standin import Provider, RecordedRequest

ALLOWED_DOMAIN = "academy.example.com"
SENDER_NAME = "Leadmail Academy"
SENDER = f"{SENDER_NAME} <hello@{ALLOWED_DOMAIN}>"
MAX_ATTEMPTS = 2
DEADLINE_S = 3.0
# Two attempts per message end a failing send; the deadline and timeout only bound it.
PROVIDER_SETTINGS = {
    "EMAIL_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
    "EMAIL_DEADLINE": str(DEADLINE_S),
    "EMAIL_TIMEOUT": "2",
    "ALLOWED_SENDER_DOMAINS": ALLOWED_DOMAIN,
}
# Long enough for a second request to arrive while the first waits for its answer.
SLOW_ANSWER_S = 0.6
# The status each provider documents for a request it will not take.
REFUSAL_STATUS: dict[Provider, int] = {
    "resend": 422,
    "postmark": 422,
    "sendgrid": 400,
    "mailgun": 400,
    "mailpit": 400,
}


@pytest.fixture(scope="session")
async def email_postgres_url(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(("resend", "sqlite"), id="resend"),
        pytest.param(("postmark", "sqlite"), id="postmark"),
        pytest.param(("sendgrid", "sqlite"), id="sendgrid"),
        pytest.param(("mailgun", "sqlite"), id="mailgun"),
        pytest.param(("mailpit", "sqlite"), id="mailpit"),
        pytest.param(("resend", "postgres"), id="resend-postgres", marks=pytest.mark.postgres),
    ],
)
def rig(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmailRig]:
    provider, database = request.param
    workdir = tmp_path_factory.mktemp(f"email-{provider}-{database}")
    if database == "sqlite":
        database_url = f"sqlite:///{workdir / 'leadmail.db'}"
    else:
        database_url = request.getfixturevalue("email_postgres_url")
    with email_rig(provider, database_url, workdir, name=provider, **PROVIDER_SETTINGS) as rig:
        yield rig


@pytest.fixture
def email(rig: EmailRig) -> EmailRig:
    """The module's rig, with the stand-in's record and script cleared for this test."""
    rig.standin.reset()
    return rig


def welcome_variables(first_name: str) -> dict[str, str]:
    return {
        "school_name": "Ada & Co <Academy>",
        "first_name": first_name,
        "courses_link": f"https://academy.example.com/courses?ref={new_name('ref')}&x=1",
        "contact_email": f"hello@{ALLOWED_DOMAIN}",
    }


def check_sent_message(
    message: dict[str, Any], provider: Provider, request: RecordedRequest
) -> None:
    assert message["status"] == "sent", message
    assert message["provider"] == provider, message
    assert request.answer in ("200", "202"), request
    assert request.provider_id, request
    assert message["provider_message_id"] == request.provider_id, (message, request)
    assert message["last_error"] == "", message


def test_plain_send_reaches_the_provider_once_as_sent(email: EmailRig) -> None:
    to = [new_email("ada"), f"Bob Example <{new_email('bob')}>"]
    subject = f"Your trial class, Zoë & Bob {new_name('s')}"
    html = f"<h1>Hello Zoë</h1><p>Caf\u00e9 &amp; <b>croissants</b> {new_name('h')}</p>"
    with email.client() as api:
        response = api.post(SEND, json={"to": to, "subject": subject, "from": SENDER, "html": html})
        data = ok_data(response)
        assert response.headers.get("Idempotent-Replayed") is None
        assert "sent" in response.json()["message"].lower(), response.json()
        logged = ok_data(api.get(f"{MESSAGES}/{data['id']}"))

    [request] = email.standin.requests
    assert request.method == "POST"
    assert request.path == provider_path(email.provider)
    header, value = email.auth_header()
    assert request.header(header) == value, request.headers
    got = delivered(request)
    assert got.sender == f"hello@{ALLOWED_DOMAIN}"
    assert got.sender_name == SENDER_NAME
    assert got.to == (to[0], to[1].partition("<")[2].rstrip(">"))
    assert got.subject == subject
    assert got.html == html

    check_sent_message(data, email.provider, request)
    assert data["attempts"] == 1, data
    assert data["subject"] == subject
    assert data["template_id"] is None
    assert len(data["to"]) == 2, data
    assert all(box in shown for box, shown in zip(got.to, data["to"], strict=True)), data
    assert logged == data
    assert_not_logged(email.server, "the email's HTML body", html)


def test_template_send_is_one_rendered_escaped_message_per_recipient(email: EmailRig) -> None:
    recipients = [new_email("r1"), new_email("r2"), new_email("r3")]
    first_name = '<script>alert("x")</script> Zoë & O\'Neil'
    variables = welcome_variables(first_name)
    with email.client() as api:
        response = api.post(
            TEMPLATE,
            json={
                "to": recipients,
                "template_id": "welcome",
                "variables": variables,
                "from": SENDER,
            },
        )
        data = ok_data(response)
        assert "sent" in response.json()["message"].lower(), response.json()
        messages = data["messages"]
        logged = [ok_data(api.get(f"{MESSAGES}/{m['id']}")) for m in messages]

    requests = email.standin.requests
    assert len(requests) == 3, requests
    header, value = email.auth_header()
    by_recipient: dict[str, RecordedRequest] = {}
    for request in requests:
        assert request.path == provider_path(email.provider)
        assert request.header(header) == value
        got = delivered(request)
        assert len(got.to) == 1, f"one recipient per message, got {got.to}"
        by_recipient[got.to[0]] = request
        # The subject is plain text; the body has every value HTML-escaped.
        assert got.subject == f"Welcome to Ada & Co <Academy>, {first_name}"
        assert "<script>" not in got.html
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Zoë &amp; O&#39;Neil" in got.html
        assert "Ada &amp; Co &lt;Academy&gt;" in got.html
        assert variables["courses_link"].replace("&", "&amp;") in got.html
        assert "{{" not in got.html
        assert got.sender == f"hello@{ALLOWED_DOMAIN}"
    assert sorted(by_recipient) == sorted(recipients)

    assert [m["to"] for m in messages] == [[r] for r in recipients]  # in the order given
    assert len({m["id"] for m in messages}) == 3
    for message, recipient in zip(messages, recipients, strict=True):
        check_sent_message(message, email.provider, by_recipient[recipient])
        assert message["template_id"] == "welcome"
        assert message["attempts"] == 1
    assert logged == messages


def test_same_idempotency_key_and_body_replay_without_sending(email: EmailRig) -> None:
    plain_key, template_key = new_name("idem-plain"), new_name("idem-template")
    plain = {"to": new_email("once"), "subject": "Just once", "from": SENDER, "html": "<p>1</p>"}
    template = {
        "to": [new_email("t1"), new_email("t2")],
        "template_id": "welcome",
        "variables": welcome_variables("Ada"),
        "from": SENDER,
    }
    with email.client() as api:
        first = api.post(SEND, json=plain, headers={"Idempotency-Key": plain_key})
        first_template = api.post(
            TEMPLATE, json=template, headers={"Idempotency-Key": template_key}
        )
        ok_data(first)
        ok_data(first_template)
        assert first.headers.get("Idempotent-Replayed") is None
        assert first_template.headers.get("Idempotent-Replayed") is None
        assert len(email.standin.requests) == 3

        again = api.post(SEND, json=plain, headers={"Idempotency-Key": plain_key})
        again_template = api.post(
            TEMPLATE, json=template, headers={"Idempotency-Key": template_key}
        )
        # The same key with another body is a conflict, and sends nothing either.
        reused = api.post(
            SEND, json={**plain, "subject": "Other"}, headers={"Idempotency-Key": plain_key}
        )

    assert again.status_code == 200, again.text
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json()
    assert again_template.status_code == 200, again_template.text
    assert again_template.headers.get("Idempotent-Replayed") == "true"
    assert again_template.json() == first_template.json()
    assert_error(reused, 409, "IDEMPOTENCY_KEY_REUSED")
    assert len(email.standin.requests) == 3, "a replay reached the provider"


def test_the_same_key_while_the_first_request_runs_is_409_and_sends_nothing(
    email: EmailRig,
) -> None:
    key = new_name("concurrent")
    body = {"to": new_email("twice"), "subject": "Twice", "from": SENDER, "html": "<p>2</p>"}

    def first_send() -> httpx.Response:
        with email.client() as api:
            return api.post(SEND, json=body, headers={"Idempotency-Key": key})

    email.standin.latency = SLOW_ANSWER_S  # the first request is held at the provider
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            first = pool.submit(first_send)
            wait_for(
                "the first request to reach the provider", lambda: email.standin.request_count > 0
            )
            with email.client() as api:
                second = api.post(SEND, json=body, headers={"Idempotency-Key": key})
            done = first.result(timeout=10)
    finally:
        email.standin.latency = 0.0
    assert_error(second, 409, "IDEMPOTENCY_IN_PROGRESS")
    data = ok_data(done)
    [request] = email.standin.requests
    check_sent_message(data, email.provider, request)


def test_outage_is_503_then_the_same_key_sends_only_once_more(email: EmailRig) -> None:
    key = new_name("outage")
    body = {"to": new_email("patient"), "subject": "Outage", "from": SENDER, "html": "<p>o</p>"}
    email.standin.fail_next(1000, status=503)  # everything, until reset
    with email.client() as api:
        failed = api.post(SEND, json=body, headers={"Idempotency-Key": key})
        error = assert_error(failed, 503, "PROVIDER_UNAVAILABLE")
        assert failed.headers.get("Retry-After"), failed.headers
        message = error["data"]
        assert message["status"] == "failed", message
        assert message["attempts"] == MAX_ATTEMPTS, message
        assert "503" in message["last_error"], message
        assert message["provider_message_id"] is None, message
        outage_requests = email.standin.requests
        assert len(outage_requests) == MAX_ATTEMPTS
        assert all(r.answer == "503" for r in outage_requests)
        ok_data(api.get(f"{MESSAGES}/{message['id']}"))  # in the log, failed

        email.standin.reset()  # the provider is back
        retried = api.post(SEND, json=body, headers={"Idempotency-Key": key})
        data = ok_data(retried)
        logged = ok_data(api.get(f"{MESSAGES}/{message['id']}"))

    [request] = email.standin.requests
    assert retried.headers.get("Idempotent-Replayed") is None
    assert data["id"] == message["id"], "the retry made a new message instead of finishing it"
    check_sent_message(data, email.provider, request)
    assert data["attempts"] == MAX_ATTEMPTS + 1, data
    assert delivered(request).to == (body["to"],)
    assert logged == data


def test_partial_outage_of_a_template_send_resends_only_what_failed(email: EmailRig) -> None:
    key = new_name("partial")
    recipients = [new_email("p1"), new_email("p2"), new_email("p3")]
    body = {
        "to": recipients,
        "template_id": "welcome",
        "variables": welcome_variables("Partial"),
        "from": SENDER,
    }
    # Four 503s for three messages of two attempts each: one or two messages fail, the
    # rest go through on their second attempt.
    email.standin.fail_next(4, status=503)
    with email.client() as api:
        first = api.post(TEMPLATE, json=body, headers={"Idempotency-Key": key})
        error = assert_error(first, 503, "PROVIDER_UNAVAILABLE")
        messages = error["data"]["messages"]
        assert [m["to"] for m in messages] == [[r] for r in recipients]
        failed = [m for m in messages if m["status"] == "failed"]
        sent = [m for m in messages if m["status"] == "sent"]
        assert failed, messages
        assert sent, messages
        assert len(failed) + len(sent) == 3, messages
        assert f"{len(failed)} of 3" in error["error"], error
        assert all(m["attempts"] == MAX_ATTEMPTS for m in failed), failed
        assert all(m["provider_message_id"] for m in sent), sent
        assert len(email.standin.requests) == sum(m["attempts"] for m in messages)

        email.standin.reset()
        retried = api.post(TEMPLATE, json=body, headers={"Idempotency-Key": key})
        data = ok_data(retried)
        # Now that every message is sent, the key replays this last answer.
        replayed = api.post(TEMPLATE, json=body, headers={"Idempotency-Key": key})
    assert replayed.status_code == 200, replayed.text
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert replayed.json() == retried.json()

    again = data["messages"]
    assert [m["id"] for m in again] == [m["id"] for m in messages]
    assert all(m["status"] == "sent" for m in again), again
    requests = email.standin.requests
    assert len(requests) == len(failed), "only the failed messages may be sent again"
    assert sorted(delivered(r).to[0] for r in requests) == sorted(m["to"][0] for m in failed)
    before = {m["id"]: m for m in sent}
    for message in again:
        if message["id"] in before:  # untouched: same provider id, no new attempt
            assert message == before[message["id"]]
        else:
            assert message["attempts"] == MAX_ATTEMPTS + 1, message
            [request] = [r for r in requests if delivered(r).to == tuple(message["to"])]
            check_sent_message(message, email.provider, request)


def test_provider_refusal_is_502_with_the_providers_own_words(email: EmailRig) -> None:
    status = REFUSAL_STATUS[email.provider]
    words = f"The recipient domain is not verified ({new_name('why')})"
    email.standin.fail_next(1, status=status, message=words)
    with email.client() as api:
        response = api.post(
            SEND,
            json={"to": new_email("no"), "subject": "Refused", "from": SENDER, "html": "<p>n</p>"},
        )
        error = assert_error(response, 502, "PROVIDER_REJECTED")
        message = error["data"]
        logged = ok_data(api.get(f"{MESSAGES}/{message['id']}"))

    assert words in error["error"], error
    assert str(status) in error["error"], error
    [request] = email.standin.requests  # a refusal is not retried
    assert request.answer == str(status)
    assert message["status"] == "failed", message
    assert message["attempts"] == 1, message
    assert words in message["last_error"], message
    assert logged["status"] == "failed"
    assert words in logged["last_error"]


def test_sender_outside_the_allowed_domains_is_403_and_never_sent(email: EmailRig) -> None:
    elsewhere = "Spoofer <billing@elsewhere.example.com>"
    with email.client() as api:
        plain = api.post(
            SEND,
            json={"to": new_email("x"), "subject": "Hi", "from": elsewhere, "html": "<p>x</p>"},
        )
        template = api.post(
            TEMPLATE,
            json={
                "to": [new_email("y")],
                "template_id": "welcome",
                "variables": welcome_variables("Y"),
                "from": elsewhere,
            },
        )
        assert_error(plain, 403, "SENDER_NOT_ALLOWED")
        assert_error(template, 403, "SENDER_NOT_ALLOWED")
        assert email.standin.requests == []

        # The allowed domain, written in capitals: domains compare without case.
        allowed = api.post(
            SEND,
            json={
                "to": new_email("z"),
                "subject": "Hi",
                "from": "hello@ACADEMY.Example.com",
                "html": "<p>z</p>",
            },
        )
    ok_data(allowed)
    [request] = email.standin.requests
    assert delivered(request).sender == f"hello@{ALLOWED_DOMAIN}"


def long_id_answer(provider: Provider, provider_id: str) -> dict[str, Any]:
    """The provider's acceptance, carrying ``provider_id`` where it puts its id."""
    match provider:
        case "resend":
            return {"status": 200, "body": json.dumps({"id": provider_id}).encode()}
        case "postmark":
            data = {"MessageID": provider_id, "ErrorCode": 0, "Message": "OK"}
            return {"status": 200, "body": json.dumps(data).encode()}
        case "sendgrid":
            return {"status": 202, "body": b"", "headers": {"X-Message-Id": provider_id}}
        case "mailgun":
            data = {"id": provider_id, "message": "Queued. Thank you."}
            return {"status": 200, "body": json.dumps(data).encode()}
        case "mailpit":
            return {"status": 200, "body": json.dumps({"ID": provider_id}).encode()}


def test_a_provider_id_of_300_characters_is_kept_whole(email: EmailRig) -> None:
    """Longer than the column once was (varchar 255): the message went out, so it is
    stored sent with its id whole, and sent once (no error, no retry)."""
    provider_id = f"<{new_name('id')}.{'7' * 300}@mg.example>"[-300:]
    email.standin.answer_next(1, **long_id_answer(email.provider, provider_id))
    body = {"to": new_email("long"), "subject": "Long id", "from": SENDER, "html": "<p>l</p>"}
    with email.client() as api:
        data = ok_data(api.post(SEND, json=body))
        logged = ok_data(api.get(f"{MESSAGES}/{data['id']}"))

    assert len(email.standin.requests) == 1
    assert data["status"] == "sent", data
    assert data["provider_message_id"] == provider_id
    assert logged["provider_message_id"] == provider_id
    assert len(logged["provider_message_id"]) == 300


def test_the_provider_key_is_never_logged_nor_returned(email: EmailRig) -> None:
    """Last in the module: the server's whole output so far is checked. The stand-in never
    echoes a key by itself, so it is made to, in a refusal and in an outage."""
    _, auth_value = email.auth_header()
    credential = auth_value.partition(" ")[2] or auth_value
    # Every form the key travels in: as set, the header's credential (for Mailgun and
    # Mailpit the base64 of basic auth's user:password), URL-encoded, the password alone.
    secret_parts = [email.api_key, credential, quote(credential, safe="")]
    if email.provider == "mailpit":
        secret_parts.append(email.api_key.partition(":")[2])  # the password alone
    secret_parts = list(dict.fromkeys(secret_parts))
    echoed = " / ".join(f"key {part} is not allowed" for part in secret_parts)
    email.standin.fail_next(1, status=REFUSAL_STATUS[email.provider], message=echoed)
    email.standin.fail_next(MAX_ATTEMPTS, status=503, message=echoed)
    email.standin.fail_next(1, status=401, body=f"Unauthorized: {email.api_key}".encode())
    body = {"to": new_email("k"), "subject": "Keys", "from": SENDER, "html": "<p>k</p>"}
    with email.client() as api:
        refused = api.post(SEND, json=body)
        unavailable = api.post(SEND, json=body)
        unauthorized = api.post(SEND, json=body)
    assert_error(refused, 502, "PROVIDER_REJECTED")
    assert_error(unavailable, 503, "PROVIDER_UNAVAILABLE")
    assert_error(unauthorized, 502, "PROVIDER_REJECTED")
    assert len(email.standin.requests) == 2 + MAX_ATTEMPTS
    with email.client() as api:
        stored = [
            ok_data(api.get(f"{MESSAGES}/{r.json()['data']['id']}"))["last_error"]
            for r in (refused, unavailable, unauthorized)
        ]
    for text in (refused.text, unavailable.text, unauthorized.text, *stored):
        assert "[redacted]" in text, text
        for part in secret_parts:
            assert part not in text, "the provider key was returned or stored"

    assert_not_logged(email.server, "the provider API key", *secret_parts)
