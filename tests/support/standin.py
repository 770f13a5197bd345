"""A real local HTTP server that answers like the email providers do, failures included.

One server stands in for every provider at once: the path says which one is meant
(``/emails`` Resend, ``/email`` Postmark, ``/v3/mail/send`` SendGrid,
``/v3/{domain}/messages`` Mailgun, ``/api/v1/send`` Mailpit; the batch endpoints
``/emails/batch`` and ``/email/batch``: standin_batches.py). It speaks HTTP/1.1 with
keep-alive (h11, the parser httpx itself uses) on an asyncio loop in a background thread,
so a test, sync or async, never blocks it. Not uvicorn: an ASGI app cannot hang up on a
client without answering, and dropping connections is one of the failures to script.

    with provider_standin(api_key="re_test") as standin:
        standin.fail_next(2, status=503)
        ... send to standin.url ...
        assert len(standin.requests) == 2

Every request is recorded (method, path, headers, body, and how it was answered) before
it is answered, so a test that has its answer can read the record at once. ``latency``
delays every answer (the benchmark uses 0.05 s).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import secrets
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, Literal
from urllib.parse import parse_qsl

import h11

from tests.support.standin_batches import BATCH_PATHS, BatchEndpoints, is_batch
from tests.support.standin_batches import malformed as batch_malformed

Provider = Literal["resend", "postmark", "sendgrid", "mailgun", "mailpit"]
PROVIDERS: tuple[Provider, ...] = ("resend", "postmark", "sendgrid", "mailgun", "mailpit")

_MAILGUN_PATH = re.compile(r"^/v3/(?P<domain>[^/]+)/messages$")
_FIXED_PATHS: dict[str, Provider] = {
    "/emails": "resend",
    "/email": "postmark",
    "/v3/mail/send": "sendgrid",
    "/api/v1/send": "mailpit",
    **BATCH_PATHS,
}
_READ_CHUNK = 65536
_REASONS = {
    200: "OK",
    202: "Accepted",
    301: "Moved Permanently",
    302: "Found",
    307: "Temporary Redirect",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def provider_of(path: str) -> Provider | None:
    """Which provider an API path belongs to, or None."""
    if path in _FIXED_PATHS:
        return _FIXED_PATHS[path]
    return "mailgun" if _MAILGUN_PATH.match(path) else None


# What the providers answer. Pure functions, so the contract tests can hold them against
# the providers' published response schemas.


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    provider_id: str | None = None
    provider_ids: tuple[str, ...] = ()  # a batch's, one per message accepted
    replayed: bool = False  # an idempotency key's first answer, again: nothing delivered


def accepted(provider: Provider, request: RecordedRequest) -> Answer:
    """The provider's answer to a message it accepted, with a fresh id."""
    match provider:
        case "resend":
            resend_id = str(uuid.uuid4())
            return _json(200, {"id": resend_id}, resend_id)
        case "postmark":
            postmark_id = str(uuid.uuid4())
            data = request.json()
            to = data.get("To", "") if isinstance(data, dict) else ""
            return _json(
                200,
                {
                    "To": to,
                    "SubmittedAt": datetime.now(UTC).isoformat(timespec="milliseconds"),
                    "MessageID": postmark_id,
                    "ErrorCode": 0,
                    "Message": "OK",
                },
                postmark_id,
            )
        case "sendgrid":
            sendgrid_id = secrets.token_urlsafe(16)
            return Answer(202, (("X-Message-Id", sendgrid_id),), b"", sendgrid_id)
        case "mailgun":
            match = _MAILGUN_PATH.match(request.path)
            domain = match["domain"] if match else "example.com"
            stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
            mailgun_id = f"<{stamp}.{secrets.token_hex(8)}@{domain}>"
            return _json(200, {"id": mailgun_id, "message": "Queued. Thank you."}, mailgun_id)
        case "mailpit":
            mailpit_id = secrets.token_urlsafe(16)
            return _json(200, {"ID": mailpit_id}, mailpit_id)


_DEFAULT_ERRORS: dict[int, str] = {
    400: "The request body is not valid.",
    401: "Authentication failed: the credentials are missing or wrong.",
    403: "This key may not send from that domain.",
    409: "The request conflicts with another.",
    422: "The email request is invalid.",
    429: "Too many requests. Slow down.",
    500: "An unexpected error occurred.",
    502: "Bad gateway.",
    503: "The service is temporarily unavailable.",
}
_RESEND_NAMES = {
    400: "validation_error",
    401: "missing_api_key",
    403: "invalid_api_key",
    404: "not_found",
    405: "method_not_allowed",
    409: "invalid_idempotent_request",
    422: "validation_error",
    429: "rate_limit_exceeded",
}


def refused(provider: Provider, status: int, message: str | None = None) -> Answer:
    """A failure answer in the provider's own error shape."""
    text = message or _DEFAULT_ERRORS.get(status, _REASONS.get(status, "Error"))
    match provider:
        case "resend":
            # https://resend.com/docs/api-reference/errors
            name = _RESEND_NAMES.get(status, "internal_server_error")
            return _json(status, {"statusCode": status, "name": name, "message": text})
        case "postmark":
            # StandardPostmarkResponse: ErrorCode 10 is a bad server token, 300 an invalid
            # email request.
            code = {401: 10, 422: 300, 429: 429}.get(status, 0 if status >= 500 else 300)
            return _json(status, {"ErrorCode": code, "Message": text})
        case "sendgrid":
            # "field" and "help" only when they apply (the description has them non-null)
            return _json(status, {"errors": [{"message": text}]})
        case "mailgun":
            if status == 401:  # Mailgun's 401 is plain text
                return _text(status, message or "Forbidden")
            return _json(status, {"message": text})
        case "mailpit":
            if status == 401:  # basic auth refused by Mailpit's HTTP layer
                return _text(status, message or "Unauthorised.")
            return _json(status, {"Error": text})


def batch_answer(provider: Provider, request: RecordedRequest, batches: BatchEndpoints) -> Answer:
    """The provider's answer to a batch with valid credentials (standin_batches.py)."""
    try:
        body = request.json()
    except ValueError:
        body = None
    problem = batch_malformed(provider, body)
    if problem:
        return refused(provider, 422, problem)
    batch = batches.answer(provider, request)
    if batch.refusal is not None:
        return refused(provider, *batch.refusal)
    answer = _json(batch.status, batch.data)
    return replace(answer, provider_ids=batch.provider_ids, replayed=batch.replayed)


def _json(
    status: int, data: Mapping[str, Any] | list[Any], provider_id: str | None = None
) -> Answer:
    body = json.dumps(data).encode()
    return Answer(status, (("Content-Type", "application/json"),), body, provider_id)


def _text(status: int, text: str) -> Answer:
    return Answer(status, (("Content-Type", "text/plain; charset=utf-8"),), text.encode())


def expected_auth(provider: Provider, api_key: str) -> tuple[str, str] | None:
    """The header (name, value) the provider checks, as its API documentation says."""
    match provider:
        case "resend" | "sendgrid":
            return ("authorization", f"Bearer {api_key}")
        case "postmark":
            return ("x-postmark-server-token", api_key)
        case "mailgun":
            return ("authorization", _basic(f"api:{api_key}"))
        case "mailpit":
            return ("authorization", _basic(api_key)) if api_key else None


def _basic(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode()).decode("ascii")


# What the stand-in saw.


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    target: str  # path and query, as sent
    headers: tuple[tuple[str, str], ...]  # names lower-cased, in the order sent
    body: bytes
    provider: Provider | None = None
    answer: str = ""  # the status sent ("202"), or "hang" / "drop" / "lost"
    provider_id: str | None = None  # the id the stand-in issued, when it accepted
    provider_ids: tuple[str, ...] = ()  # a batch's: one per message it accepted, in order
    replayed: bool = False  # answered as the first request with its idempotency key was
    received_at: float = 0.0  # time.monotonic() when it was read whole

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def is_batch(self) -> bool:
        return is_batch(self.path)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers if k == wanted), None)

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> list[tuple[str, str]]:
        """The fields of a multipart/form-data or urlencoded body, in order."""
        content_type = self.header("content-type") or ""
        if content_type.startswith("application/x-www-form-urlencoded"):
            return parse_qsl(self.body.decode(), keep_blank_values=True)
        if not content_type.startswith("multipart/form-data"):
            raise ValueError(f"not a form body: {content_type!r}")
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + self.body)
        fields: list[tuple[str, str]] = []
        for part in message.walk():
            if part.is_multipart():
                continue
            fields.append((_field_name(part), _payload(part).decode()))
        return fields


def _field_name(part: Message) -> str:
    name = part.get_param("name", header="content-disposition")
    if not isinstance(name, str):
        raise ValueError("a form part without a name")
    return name


def _payload(part: Message) -> bytes:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        raise ValueError("a form part without a body")
    return payload


@dataclass(frozen=True, slots=True)
class _Scripted:
    kind: Literal["answer", "hang", "drop", "trickle", "lose", "flood"]
    status: int = 0
    message: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    interval: float = 0.0
    size: int = 0  # a flood's body, in bytes
    length: bool = False  # a flood's Content-Length is sent (else it is chunked)


_FLOOD_CHUNK = b"x" * 65536


class ProviderStandin:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        api_key: str | None = None,
        hang_seconds: float = 60.0,
        keep_requests: bool = True,
    ) -> None:
        """``api_key``: when given, a request without that provider's auth header for it
        is refused with 401, as the provider would. ``hang_seconds``: how long a hung
        request is held at most (until the client gives up or the stand-in closes).
        ``keep_requests=False`` only counts requests (a long benchmark would fill memory)."""
        self.latency = latency
        self.keep_requests = keep_requests
        self.api_key = api_key
        self.hang_seconds = hang_seconds
        self.host = "127.0.0.1"
        self.port = 0
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._request_count = 0
        self._script: deque[_Scripted] = deque()
        self._connections_opened = 0
        self._delivered = 0
        self._flood_sent = 0
        self._batches = BatchEndpoints()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="provider-standin", daemon=True
        )
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # Called from the test's thread.

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=5)

    def close(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """Requests seen, kept or not."""
        with self._lock:
            return self._request_count

    @property
    def connections_opened(self) -> int:
        with self._lock:
            return self._connections_opened

    @property
    def connections_open(self) -> int:
        """Connections a client holds open at this moment."""
        return len(self._writers)  # a set changed on the stand-in's loop; len() is atomic

    @property
    def delivered_count(self) -> int:
        """Messages the stand-in accepted, each once: a batch counts its accepted messages;
        an answer replayed for an idempotency key seen before counts none."""
        with self._lock:
            return self._delivered

    @property
    def flood_sent(self) -> int:
        """Bytes of flooded bodies handed to the socket (flood_next): what the client
        read, and what the kernel's buffers held when it hung up."""
        with self._lock:
            return self._flood_sent

    def reset(self) -> None:
        """Forget the requests seen, any failures still scripted, the recipients to refuse
        and the idempotency keys seen."""
        with self._lock:
            self._requests.clear()
            self._request_count = 0
            self._script.clear()
            self._connections_opened = 0
            self._delivered = 0
            self._flood_sent = 0
        self._batches.reset()

    def refuse_recipient(self, address: str, message: str | None = None) -> None:
        """A batch's message to ``address`` is refused: by Postmark in its answer
        (ErrorCode 406, the batch itself 200), by Resend the whole batch (422, as its strict
        validation does)."""
        text = message or (
            "You tried to send to recipient(s) that have been marked as inactive."
            f" Found inactive addresses: {address}."
        )
        self._batches.refuse(address, text)

    def answer_next(
        self,
        n: int,
        *,
        status: int,
        message: str | None = None,
        retry_after: str | float | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> None:
        """The next ``n`` requests get ``status``: with the provider's error body carrying
        ``message`` (a default text if None), or with ``body`` exactly if given."""
        if status < 300 and body is None:
            raise ValueError("a 1xx or 2xx answer needs its body")
        extra = dict(headers or {})
        if retry_after is not None:
            extra["Retry-After"] = str(retry_after)
        step = _Scripted("answer", status, message, tuple(extra.items()), body)
        with self._lock:
            self._script.extend([step] * n)

    def fail_next(
        self,
        n: int,
        *,
        status: int,
        message: str | None = None,
        retry_after: str | float | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> None:
        """The next ``n`` requests fail with ``status`` (3xx, 4xx or 5xx)."""
        if status < 300:
            raise ValueError("a failure needs a status of 300 or more; see answer_next")
        self.answer_next(
            n, status=status, message=message, retry_after=retry_after, headers=headers, body=body
        )

    def redirect_next(self, n: int, *, location: str, status: int = 302) -> None:
        self.fail_next(n, status=status, headers={"Location": location}, body=b"")

    def hang_next(self, n: int) -> None:
        """The next ``n`` requests are read and never answered."""
        with self._lock:
            self._script.extend([_Scripted("hang")] * n)

    def trickle_next(self, n: int, *, interval: float) -> None:
        """The next ``n`` requests are accepted, but the answer's body comes one byte every
        ``interval`` seconds: never silent for long, yet slow as a whole."""
        with self._lock:
            self._script.extend([_Scripted("trickle", interval=interval)] * n)

    def flood_next(self, n: int, *, size: int, status: int = 200, length: bool = False) -> None:
        """The next ``n`` requests are answered ``status`` with a body of ``size`` bytes,
        written 64 KiB at a time as the client reads it (never held whole here): chunked,
        or with its Content-Length when ``length``."""
        with self._lock:
            self._script.extend([_Scripted("flood", status, size=size, length=length)] * n)

    def drop_next(self, n: int) -> None:
        """The next ``n`` requests are read, then the connection is cut without an answer."""
        with self._lock:
            self._script.extend([_Scripted("drop")] * n)

    def lose_answer_next(self, n: int) -> None:
        """The next ``n`` requests are handled as usual (delivered, their idempotency key
        kept), then the connection is cut before the answer: the client cannot tell."""
        with self._lock:
            self._script.extend([_Scripted("lose")] * n)

    # On the stand-in's loop.

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, 0, reuse_address=True, backlog=1024
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()  # one may be sleeping out its latency
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        with self._lock:
            self._connections_opened += 1
        try:
            await self._serve(reader, writer)
        except (ConnectionError, h11.ProtocolError):
            pass  # the client went away or sent garbage: nothing to answer
        finally:
            writer.transport.abort()
            self._writers.discard(writer)
            self._tasks.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h11.Connection(h11.SERVER)
        while True:
            received = await _read_request(connection, reader)
            if received is None:
                return
            request = received
            step = self._next_step()
            if step is not None and step.kind in ("hang", "drop"):
                self._record(request, None, step.kind)
                if step.kind == "hang":
                    # Held until the client gives up (EOF), the stand-in closes, or the
                    # hang time runs out; never answered either way.
                    with contextlib.suppress(TimeoutError, ConnectionError):
                        await asyncio.wait_for(reader.read(1), self.hang_seconds)
                return  # "drop": _accept aborts the connection
            if step is not None and step.kind == "lose":
                self._record(request, self._answer(request, None), "lost")
                return
            if step is not None and step.kind == "flood":
                self._record(request, None, str(step.status))
                await self._flood(connection, writer, step)
                return
            trickle = step.interval if step is not None and step.kind == "trickle" else 0.0
            answer = self._answer(request, None if trickle else step)
            self._record(request, answer, str(answer.status))
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            headers = [
                *answer.headers,
                ("Content-Length", str(len(answer.body))),
                ("Server", "provider-standin"),
            ]
            reason = _REASONS.get(answer.status, "Unknown").encode()
            head = h11.Response(status_code=answer.status, headers=headers, reason=reason)
            wire = b"".join(
                connection.send(event) or b""
                for event in (head, h11.Data(data=answer.body), h11.EndOfMessage())
            )
            if trickle:
                for i in range(len(wire)):
                    await asyncio.sleep(trickle)
                    writer.write(wire[i : i + 1])
                    await writer.drain()
            else:
                writer.write(wire)
            await writer.drain()
            if connection.our_state is h11.MUST_CLOSE:
                return
            connection.start_next_cycle()

    async def _flood(
        self, connection: h11.Connection, writer: asyncio.StreamWriter, step: _Scripted
    ) -> None:
        framing = (
            ("Content-Length", str(step.size)) if step.length else ("Transfer-Encoding", "chunked")
        )
        head = h11.Response(
            status_code=step.status,
            headers=[("Content-Type", "application/json"), framing],
            reason=_REASONS.get(step.status, "Unknown").encode(),
        )
        writer.write(connection.send(head) or b"")
        left = step.size
        while left > 0:  # until the client hangs up (ConnectionError, in _accept)
            chunk = _FLOOD_CHUNK[: min(left, len(_FLOOD_CHUNK))]
            writer.write(connection.send(h11.Data(data=chunk)) or b"")
            await writer.drain()
            left -= len(chunk)
            with self._lock:
                self._flood_sent += len(chunk)
        writer.write(connection.send(h11.EndOfMessage()) or b"")
        await writer.drain()

    def _next_step(self) -> _Scripted | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def _record(self, request: RecordedRequest, answer: Answer | None, outcome: str) -> None:
        provider_id = answer.provider_id if answer is not None else None
        done = replace(request, answer=outcome, provider_id=provider_id)
        if answer is not None and (answer.provider_ids or answer.replayed):
            done = replace(done, provider_ids=answer.provider_ids, replayed=answer.replayed)
        with self._lock:
            self._request_count += 1
            if answer is not None and not answer.replayed:
                self._delivered += len(answer.provider_ids) + (provider_id is not None)
            if self.keep_requests:
                self._requests.append(done)

    def _answer(self, request: RecordedRequest, step: _Scripted | None) -> Answer:
        provider = request.provider
        if step is not None:
            if step.body is not None:
                return Answer(step.status, step.headers, step.body)
            if provider is None:
                return Answer(step.status, step.headers, (step.message or "").encode())
            shaped = refused(provider, step.status, step.message)
            return Answer(step.status, (*shaped.headers, *step.headers), shaped.body)
        if provider is None:
            return _text(404, "Not Found")
        if request.method != "POST":
            return refused(provider, 405, "Method not allowed.")
        expected = expected_auth(provider, self.api_key) if self.api_key is not None else None
        if expected is not None and request.header(expected[0]) != expected[1]:
            return refused(provider, 401)
        if request.is_batch:
            return batch_answer(provider, request, self._batches)
        problem = _malformed(provider, request)
        if problem:
            return refused(provider, 422 if provider == "postmark" else 400, problem)
        return accepted(provider, request)


async def _read_request(
    connection: h11.Connection, reader: asyncio.StreamReader
) -> RecordedRequest | None:
    """The next whole request on the connection, or None when the client closes it."""
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(_READ_CHUNK))
        elif isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            target = head.target.decode("ascii", errors="replace")
            return RecordedRequest(
                method=head.method.decode("ascii"),
                target=target,
                headers=tuple(
                    (name.decode("latin-1").lower(), value.decode("latin-1"))
                    for name, value in head.headers
                ),
                body=bytes(body),
                provider=provider_of(target.partition("?")[0]),
                received_at=time.monotonic(),
            )
        elif isinstance(event, h11.ConnectionClosed):
            return None
        else:  # PAUSED: h11 waits for the response before reading on
            return None


def _malformed(provider: Provider, request: RecordedRequest) -> str:
    """What a provider would object to in the body's shape, or "" (a light check: the
    contract tests hold the requests against the full published schemas)."""
    if provider == "mailgun":
        try:
            names = {name for name, _ in request.form()}
        except ValueError as e:
            return f"the body must be form data: {e}"
        missing = [field for field in ("from", "to", "subject") if field not in names]
        return f"{missing[0]} parameter is missing" if missing else ""
    try:
        data = request.json()
    except ValueError:
        return "the body is not valid JSON"
    if not isinstance(data, dict):
        return "the body must be a JSON object"
    required: dict[Provider, Sequence[str]] = {
        "resend": ("from", "to", "subject"),
        "postmark": ("From", "To"),
        "sendgrid": ("personalizations", "from"),
        "mailpit": ("From",),
    }
    missing = [field for field in required[provider] if field not in data]
    return f"missing required field: {missing[0]}" if missing else ""


@contextlib.contextmanager
def provider_standin(
    *,
    latency: float = 0.0,
    api_key: str | None = None,
    hang_seconds: float = 60.0,
    keep_requests: bool = True,
) -> Iterator[ProviderStandin]:
    standin = ProviderStandin(
        latency=latency, api_key=api_key, hang_seconds=hang_seconds, keep_requests=keep_requests
    )
    standin.start()
    try:
        yield standin
    finally:
        standin.close()
