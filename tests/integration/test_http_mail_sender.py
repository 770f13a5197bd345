"""The httpx sender against a real local server answering as each provider does.

Every failure is real on the wire: statuses with the provider's error bodies, a request
never answered, a connection cut without an answer, a port nobody listens on, a redirect.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from urllib.parse import quote

import httpx
import pytest
import structlog
from structlog.testing import capture_logs

from leadmail.adapters.mail import console as console_module
from leadmail.adapters.mail import http as http_module
from leadmail.adapters.mail.console import HIDDEN, ConsoleEmailProvider
from leadmail.adapters.mail.dialects.base import MAX_PROVIDER_TEXT
from leadmail.adapters.mail.http import MAX_ANSWER_BYTES, MAX_CONNECTIONS, HttpEmailProvider
from leadmail.adapters.mail.providers import dialect_for
from leadmail.domain.delivery import BatchItem, ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Mailbox, OutgoingEmail
from tests.support.mail import (
    DOMAIN,
    EMAIL,
    SECRET,
    SHORT_TIMEOUT,
    TIMEOUT,
    failure_of,
    key_for,
    new_sender,
)
from tests.support.standin import (
    PROVIDERS,
    Provider,
    ProviderStandin,
    expected_auth,
    provider_standin,
)


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> Provider:
    name: Provider = request.param
    return name


@pytest.fixture
def standin(provider: Provider) -> Iterator[ProviderStandin]:
    with provider_standin(api_key=key_for(provider)) as server:
        yield server


@pytest.fixture
async def sender(provider: Provider, standin: ProviderStandin) -> AsyncIterator[HttpEmailProvider]:
    subject = new_sender(provider, standin)
    yield subject
    await subject.close()


# Accepted


async def test_an_accepted_message_returns_the_providers_id(
    provider: Provider, standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    provider_id = await sender.send(EMAIL, message_id="msg_accepted")

    (seen,) = standin.requests
    assert seen.answer in ("200", "202")
    assert provider_id is not None
    assert provider_id == seen.provider_id
    # What went over the wire is what the dialect built (the contract tests hold that
    # against the provider's schema), non-ASCII text included.
    built = dialect_for(provider, domain=DOMAIN).build(EMAIL, "msg_accepted")
    assert (seen.method, seen.path) == (built.method, built.path)
    if built.json is not None:
        assert seen.header("content-type") == "application/json"
        assert seen.json() == built.json
    else:
        assert (seen.header("content-type") or "").startswith("multipart/form-data; boundary=")
        assert seen.form() == list(built.form)
    for name, value in built.headers.items():
        assert seen.header(name) == value


async def test_a_messages_mail_headers_go_over_the_wire_as_built(
    provider: Provider, standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    headers = (("List-Unsubscribe", "<http://x.example/u/t>"), ("List-Unsubscribe-Post", "x"))
    email = dataclasses.replace(EMAIL, headers=headers)

    await sender.send(email, message_id="msg_headers")

    (seen,) = standin.requests
    built = dialect_for(provider, domain=DOMAIN).build(email, "msg_headers")
    if built.json is not None:
        assert seen.json() == built.json
        assert "List-Unsubscribe" in seen.body.decode()
    else:
        assert seen.form() == list(built.form)
        assert ("h:List-Unsubscribe", "<http://x.example/u/t>") in seen.form()


async def test_a_2xx_without_the_expected_body_still_counts_as_sent(
    provider: Provider,
    standin: ProviderStandin,
    sender: HttpEmailProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    standin.answer_next(1, status=202 if provider == "sendgrid" else 200, body=b"OK")
    with capture_logs() as logs:
        fresh_loggers(monkeypatch)
        provider_id = await sender.send(EMAIL, message_id="msg_odd")

    assert provider_id is None
    assert [e["event"] for e in logs] == ["email.provider_id_missing"]
    assert logs[0]["provider"] == provider


async def test_each_send_is_one_attempt_on_a_kept_alive_connection(
    standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    # One send at a time: each takes the connection the last one freed.
    ids = [await sender.send(EMAIL, message_id=f"msg_{i}") for i in range(20)]

    assert len(set(ids)) == 20
    assert len(standin.requests) == 20
    assert standin.connections_opened == 1


async def test_concurrent_sends_each_have_a_connection_and_keep_them(
    standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    async def round_of(n: int, tag: str) -> list[str | None]:
        return await asyncio.gather(
            *(sender.send(EMAIL, message_id=f"msg_{tag}{i}") for i in range(n))
        )

    first = await round_of(8, "a")
    second = await round_of(8, "b")

    assert len({*first, *second}) == 16
    assert standin.connections_opened == 8  # the second round reused the first's


async def test_sends_beyond_the_connections_wait_for_one_and_all_go(
    standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    count = MAX_CONNECTIONS + 20

    ids = await asyncio.gather(*(sender.send(EMAIL, message_id=f"msg_{i}") for i in range(count)))

    assert len(set(ids)) == count
    assert standin.connections_opened <= MAX_CONNECTIONS


# Not now: ProviderUnavailable


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_a_server_error_is_unavailable(
    standin: ProviderStandin, sender: HttpEmailProvider, status: int
) -> None:
    standin.fail_next(1, status=status, message="upstream exploded")

    error = await failure_of(sender)

    assert isinstance(error, ProviderUnavailable)
    assert f"answered {status}" in error.detail
    assert "upstream exploded" in error.detail
    assert error.retry_after is None
    assert len(standin.requests) == 1  # retrying is the service's job, not the sender's


@pytest.mark.parametrize(("header", "seconds"), [("3", 3.0), ("120", 30.0), ("soon", None)])
async def test_429_is_unavailable_with_the_retry_after_asked_for_capped_at_30_s(
    standin: ProviderStandin, sender: HttpEmailProvider, header: str, seconds: float | None
) -> None:
    standin.fail_next(1, status=429, retry_after=header)

    error = await failure_of(sender)

    assert isinstance(error, ProviderUnavailable)
    assert error.retry_after == seconds


@pytest.mark.parametrize("how", ["never answered", "answered too late", "answered too slowly"])
async def test_no_answer_within_the_timeout_is_unavailable_after_about_the_timeout(
    provider: Provider, standin: ProviderStandin, how: str
) -> None:
    if how == "never answered":
        standin.hang_next(1)
    elif how == "answered too late":
        standin.latency = SHORT_TIMEOUT * 4
    else:
        # A byte every third of the timeout: no single read waits the timeout out, so
        # only a bound on the attempt as a whole stops it.
        standin.trickle_next(1, interval=SHORT_TIMEOUT / 3)
    sender = new_sender(provider, standin, timeout=SHORT_TIMEOUT)
    try:
        started = time.monotonic()
        error = await failure_of(sender)
        elapsed = time.monotonic() - started
    finally:
        await sender.close()

    assert isinstance(error, ProviderUnavailable)
    assert "did not answer within 0.3 s" in error.detail
    assert SHORT_TIMEOUT * 0.9 <= elapsed < SHORT_TIMEOUT + 1.0
    assert len(standin.requests) == 1


async def test_a_connection_cut_without_an_answer_is_unavailable(
    standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    standin.drop_next(1)

    error = await failure_of(sender)

    assert isinstance(error, ProviderUnavailable)
    assert "could not be reached" in error.detail
    assert [r.answer for r in standin.requests] == ["drop"]
    # The next attempt gets a new connection and goes through.
    assert await sender.send(EMAIL, message_id="msg_again") is not None


async def test_nobody_listening_is_unavailable(provider: Provider) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port now: the connection is refused.
    sender = HttpEmailProvider(
        dialect_for(provider, domain=DOMAIN),
        api_key=key_for(provider),
        base_url=f"http://127.0.0.1:{port}",
        timeout=TIMEOUT,
    )
    try:
        error = await failure_of(sender)
    finally:
        await sender.close()

    assert isinstance(error, ProviderUnavailable)
    assert "ConnectError" in error.detail


# Never: ProviderRejected


@pytest.mark.parametrize("status", [400, 401, 403, 422])
async def test_a_refusal_carries_the_providers_own_words(
    standin: ProviderStandin, sender: HttpEmailProvider, status: int
) -> None:
    standin.fail_next(1, status=status, message="The domain school.example is not verified.")

    error = await failure_of(sender)

    assert isinstance(error, ProviderRejected)
    assert error.status == status
    assert "The domain school.example is not verified." in error.detail
    assert len(standin.requests) == 1


async def test_a_wrong_key_is_refused_and_not_repeated_back(
    provider: Provider, standin: ProviderStandin
) -> None:
    wrong = "leadmail:sk-wrong-000000000" if provider == "mailpit" else "sk-wrong-000000000"
    sender = new_sender(provider, standin, api_key=wrong)
    try:
        error = await failure_of(sender)
    finally:
        await sender.close()

    assert isinstance(error, ProviderRejected)
    assert error.status == 401
    assert error.detail  # the provider's text (Mailgun's is just "Forbidden")
    assert "sk-wrong" not in str(error) + repr(error)


async def test_a_long_error_text_is_cut_to_500_characters(
    standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    standin.fail_next(1, status=400, message="Invalid: " + "x" * 5000)

    error = await failure_of(sender)

    assert isinstance(error, ProviderRejected)
    assert "Invalid: xxx" in error.detail
    assert len(error.detail) <= MAX_PROVIDER_TEXT == 500


async def test_a_redirect_is_refused_and_never_followed(
    provider: Provider, standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    standin.redirect_next(1, location=f"{standin.url}/elsewhere")

    error = await failure_of(sender)

    assert isinstance(error, ProviderRejected)
    assert error.status == 302
    assert "/elsewhere" in error.detail
    # Only the API path was asked for: the redirect target never.
    built = dialect_for(provider, domain=DOMAIN).build(EMAIL, "msg_1")
    assert [r.path for r in standin.requests] == [built.path]


async def test_resend_still_working_on_the_same_key_is_not_now() -> None:
    with provider_standin(api_key=SECRET) as standin:
        sender = new_sender("resend", standin)
        try:
            # An earlier attempt with this key, given up on, is still in flight at Resend.
            standin.fail_next(
                1, status=409, body=_resend_error(409, "concurrent_idempotent_requests")
            )
            in_progress = await failure_of(sender, "msg_same")
            # The key was used with another payload: a bug, retrying cannot help.
            standin.fail_next(1, status=409, body=_resend_error(409, "invalid_idempotent_request"))
            conflict = await failure_of(sender, "msg_same")
        finally:
            await sender.close()

        assert isinstance(in_progress, ProviderUnavailable)
        assert isinstance(conflict, ProviderRejected)
        assert conflict.status == 409
        assert [r.header("idempotency-key") for r in standin.requests] == ["msg_same"] * 2


def _resend_error(status: int, name: str) -> bytes:
    return json.dumps({"statusCode": status, "name": name, "message": f"{name}."}).encode()


# Secrets


async def test_the_key_appears_in_no_exception_whatever_happens(
    provider: Provider, standin: ProviderStandin, sender: HttpEmailProvider
) -> None:
    key = key_for(provider)
    secret_parts = {key, SECRET}
    echo = f"The key {key} (password {SECRET}) is not allowed to send."
    errors: list[BaseException] = []
    for status in (400, 401, 403, 422, 429, 500, 503):
        standin.fail_next(1, status=status, message=echo)
        errors.append(await failure_of(sender))
    standin.fail_next(1, status=400, body=echo.encode())  # plain text, no provider shape
    errors.append(await failure_of(sender))
    standin.redirect_next(1, location=f"{standin.url}/login?key={SECRET}")
    errors.append(await failure_of(sender))
    standin.drop_next(1)
    errors.append(await failure_of(sender))
    short = new_sender(provider, standin, timeout=SHORT_TIMEOUT)
    standin.hang_next(1)
    errors.append(await failure_of(short))
    await short.close()

    assert len(errors) == 11
    for error in errors:
        chain: BaseException | None = error
        while chain is not None:  # the httpx exception chained as the cause too
            for text in (str(chain), repr(chain)):
                assert not any(part in text for part in secret_parts), text
            chain = chain.__cause__
    assert not any(part in repr(sender) for part in secret_parts)


# A key with what URL encoding changes, and a base64 credential with "/" and "+" in it.
ODD_SECRET = "sk/live+9f8e=7d6c?5b4a&39~2817"


def key_forms(provider: Provider, key: str) -> dict[str, str]:
    """Every form the key travels in, by name: as configured, URL-encoded, the credential
    of the auth header (the base64 of basic auth's ``user:password`` for Mailgun and
    Mailpit) plain and URL-encoded, and Mailpit's password alone."""
    auth = expected_auth(provider, key)
    assert auth is not None
    credential = auth[1].rpartition(" ")[2]
    password = key.partition(":")[2]
    forms = {
        "key": key,
        "key url-encoded": quote(key, safe=""),
        "credential": credential,  # the key itself, for bearer tokens: kept once
        "credential url-encoded": quote(credential, safe=""),
        "password": password,
        "password url-encoded": quote(password, safe=""),
    }
    named: dict[str, str] = {}
    for name, form in forms.items():
        if form and form not in named.values():
            named[name] = form
    return named


async def test_the_key_is_scrubbed_from_error_texts_in_every_form(provider: Provider) -> None:
    key = f"leadmail:{ODD_SECRET}" if provider == "mailpit" else ODD_SECRET
    forms = key_forms(provider, key)
    assert len(forms) == (6 if provider == "mailpit" else 4 if provider == "mailgun" else 2)
    texts: list[str] = []
    with provider_standin(api_key=key) as standin:
        sender = new_sender(provider, standin, api_key=key)
        try:
            for form in forms.values():
                echo = f"The credential {form} may not send from this domain."
                standin.fail_next(1, status=403, message=echo)  # in the provider's shape
                standin.fail_next(1, status=503, message=echo)
                # Across where the text is clipped (500): scrubbed first, no start of it left.
                standin.fail_next(1, status=400, body=b"x" * 480 + form.encode() + b" end")
                standin.redirect_next(1, location=f"{standin.url}/login?key={form}")
                errors = [await failure_of(sender) for _ in range(4)]
                assert [type(e) for e in errors] == [
                    ProviderRejected,
                    ProviderUnavailable,
                    ProviderRejected,
                    ProviderRejected,
                ]
                texts += [t for e in errors for t in (str(e), repr(e))]
        finally:
            await sender.close()

    assert len(standin.requests) == 4 * len(forms)
    for text in texts:
        assert "[redacted]" in text, text
        for name, form in forms.items():
            assert form[:8] not in text, (name, text)


async def test_a_refusal_inside_a_batch_is_scrubbed_of_the_key() -> None:
    forms = key_forms("postmark", ODD_SECRET)
    gone = "gone@example.org"
    with provider_standin(api_key=ODD_SECRET) as standin:
        standin.refuse_recipient(gone, " / ".join(f"{form} is inactive" for form in forms.values()))
        sender = new_sender("postmark", standin, api_key=ODD_SECRET)
        try:
            email = dataclasses.replace(EMAIL, to=(Mailbox.parse(gone),))
            [result] = await sender.send_batch([BatchItem(email, "msg_gone")], batch_key="b1")
        finally:
            await sender.close()

    assert result.error is not None
    assert "[redacted] is inactive" in result.error.detail
    assert not any(form in str(result.error) for form in forms.values())


# The answer's size


@pytest.mark.parametrize("length", [False, True], ids=["chunked", "with-content-length"])
@pytest.mark.parametrize("status", [200, 400, 503])
async def test_an_answer_over_1_mib_is_not_read_whole(length: bool, status: int) -> None:
    """50 MB answered: the sender stops past 1 MiB (or at once, when the Content-Length
    says so), holds no more than that, and fails the attempt with a clear text."""
    size = 50 * 1_048_576
    with provider_standin(api_key=SECRET) as standin:
        sender = new_sender("resend", standin)
        standin.flood_next(1, size=size, status=status, length=length)
        tracemalloc.start()
        try:
            started = time.monotonic()
            error = await failure_of(sender)
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # The connection it hung up on is not reused: the next send goes through.
        provider_id = await sender.send(EMAIL, message_id="msg_after")
        await sender.close()
        deadline = time.monotonic() + 5
        while standin.connections_open and time.monotonic() < deadline:
            await asyncio.sleep(0.01)  # the stand-in sees the hang-up
        sent = standin.flood_sent

    # A 5xx is still "not now" (retried); a 2xx this long is no provider's answer: refused.
    assert isinstance(error, ProviderUnavailable if status == 503 else ProviderRejected)
    assert f"answered {status} with more than 1 MiB; the answer was not read" in error.detail
    assert provider_id is not None
    assert peak < 4 * MAX_ANSWER_BYTES, peak  # about 1 MiB read, never 50
    # What the stand-in got out: what was read, and what the sockets' buffers took.
    assert sent < size // 4, sent
    assert elapsed < TIMEOUT


async def test_an_answer_of_1_mib_exactly_is_read() -> None:
    body = json.dumps({"id": "x" * (MAX_ANSWER_BYTES - 10)}).encode()
    assert len(body) == MAX_ANSWER_BYTES
    with provider_standin(api_key=SECRET) as standin:
        sender = new_sender("resend", standin)
        standin.answer_next(1, status=200, body=body)
        try:
            provider_id = await sender.send(EMAIL, message_id="msg_big")
        finally:
            await sender.close()

    assert provider_id == "x" * (MAX_ANSWER_BYTES - 10)


async def test_a_shared_client_reads_no_more_than_1_mib_either() -> None:
    with provider_standin(api_key=SECRET) as standin:
        async with httpx.AsyncClient() as client:
            sender = new_sender("resend", standin, client=client)
            standin.flood_next(1, size=50 * 1_048_576, status=200)
            error = await failure_of(sender)

    assert isinstance(error, ProviderRejected)
    assert "more than 1 MiB" in error.detail


# The client


async def test_concurrent_sends_share_the_pool() -> None:
    with provider_standin(api_key=SECRET, latency=0.25, keep_requests=False) as standin:
        sender = new_sender("resend", standin)
        try:
            started = time.monotonic()
            ids = await asyncio.gather(
                *(sender.send(EMAIL, message_id=f"msg_{i}") for i in range(20))
            )
            elapsed = time.monotonic() - started
        finally:
            await sender.close()

        assert len(set(ids)) == 20
        # One after another they would take 5 s; side by side, about one latency.
        assert elapsed < 2.5
        assert 2 <= standin.connections_opened <= 20
        assert (standin.request_count, standin.requests) == (20, [])


async def test_a_client_given_is_shared_and_left_open() -> None:
    with provider_standin(api_key=SECRET) as standin:
        async with httpx.AsyncClient() as client:
            sender = new_sender("resend", standin, client=client)
            assert await sender.send(EMAIL, message_id="msg_1") is not None
            await sender.close()

            assert not client.is_closed
            assert (await client.get(f"{standin.url}/nothing-here")).status_code == 404


# The console sender


async def test_the_console_sender_logs_the_message_but_not_its_body_nor_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sender = ConsoleEmailProvider()
    html = "<p>Secret discount code: LEADS-4242</p>"
    email = OutgoingEmail(EMAIL.sender, EMAIL.to, "Your code", html)

    with capture_logs() as logs:
        fresh_loggers(monkeypatch)
        provider_id = await sender.send(email, message_id="msg_console")
    await sender.close()

    assert sender.name == "console"
    assert provider_id == "console-msg_console"
    assert logs == [
        {
            "event": "email.console",
            "log_level": "info",
            "message_id": "msg_console",
            "sender_domain": "school.example",
            "recipients": 2,
            "subject": "Your code",
            "html_length": len(html),
        }
    ]
    assert "LEADS-4242" not in repr(logs)
    # No address: not the sender's, not a recipient's, not a display name.
    for text in ("zoe@", "li@example.cn", "ada@example.org", "Lovelace", "Zoë"):
        assert text not in repr(logs)


async def test_the_console_sender_prints_the_headers_without_the_links_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The token is the address in base64 (signed, not hidden): the info line cuts it out;
    the debug line, for a developer following the link, has it whole."""
    sender = ConsoleEmailProvider()
    token = "YWNjX3gKYWRhQGV4YW1wbGUub3Jn.c2lnbmF0dXJl"  # "acc_x\nada@example.org", signed
    link = f"<http://x.example/u/{token}>"
    headers = (("List-Unsubscribe", link), ("List-Unsubscribe-Post", "One"))
    email = OutgoingEmail(EMAIL.sender, EMAIL.to, "News", "<p>Hi</p>", headers=headers)

    with capture_logs() as logs:
        fresh_loggers(monkeypatch)
        await sender.send(email, message_id="msg_console")
    await sender.close()

    [info, debug] = logs
    assert info["log_level"] == "info"
    assert info["headers"] == {
        "List-Unsubscribe": f"<http://x.example/u/{HIDDEN}>",
        "List-Unsubscribe-Post": "One",
    }
    assert token not in repr(info)
    assert (debug["event"], debug["log_level"]) == ("email.console.headers", "debug")
    assert debug["headers"] == dict(headers)


def fresh_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Module loggers made anew inside capture_logs, so it sees them even when an earlier
    test configured structlog to cache loggers on first use."""
    for module in (console_module, http_module):
        monkeypatch.setattr(module, "log", structlog.get_logger("leadmail.mail"))
