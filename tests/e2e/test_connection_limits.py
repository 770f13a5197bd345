"""Connection limits on the real ``leadmail serve``, over raw sockets: the head's size
(431), a head or body that takes too long, the cap on connections served at once, and a
request the parser rejects (400), each refusal in the envelope."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer, server_with_key
from tests.support.envelope import LEADS

MAX_HEAD = 16_384
HEAD_TIMEOUT = 1.5
BODY_IDLE = 1.5
CAP = 3
LIMITS = {
    "LEADMAIL_MAX_CONNECTIONS": str(CAP),
    "LEADMAIL_HEADER_TIMEOUT_SECONDS": str(HEAD_TIMEOUT),
    "LEADMAIL_BODY_IDLE_SECONDS": str(BODY_IDLE),
    "LEADMAIL_MAX_BODY_BYTES": str(60 * 1024 * 1024),  # room for the 50 MB upload
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadmailServer]:
    workdir = tmp_path_factory.mktemp("limited-server")
    with server_with_key(
        f"sqlite:///{workdir / 'leadmail.db'}", workdir, extra_env=LIMITS, name="limited"
    ) as running:
        yield running


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[LeadmailServer]:
    """A server nothing else has used: its memory is as start-up left it."""
    with server_with_key(f"sqlite:///{tmp_path / 'leadmail.db'}", tmp_path) as running:
        yield running


def secret_of(server: LeadmailServer) -> str:
    assert server.primary is not None
    return server.primary.secret


def connect(server: LeadmailServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def head(path: str, secret: str = "", size: int = 0, extra: bytes = b"") -> bytes:
    """A GET's head, padded with one header to exactly ``size`` bytes if given."""
    lines = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + extra
    if secret:
        lines += f"Authorization: Bearer {secret}\r\n".encode()
    if size:
        lines += b"X-Pad: " + b"p" * (size - len(lines) - len(b"X-Pad: \r\n\r\n")) + b"\r\n"
    lines += b"\r\n"
    assert not size or len(lines) == size
    return lines


def lead_post(secret: str, body: bytes, declared: int | None = None) -> bytes:
    return (
        f"POST {LEADS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {secret}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared or len(body)}\r\n\r\n"
    ).encode() + body


def lead_json(padding: int = 0) -> bytes:
    email = f"{new_name('limits')}@example.com"
    return json.dumps({"name": "Ada", "email": email, "source": "website"}).encode() + (
        b" " * padding
    )


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def envelope(self, status: int, code: str) -> dict[str, Any]:
        assert self.status == status, (self.status, self.body)
        assert self.headers["content-type"] == "application/json"
        envelope: dict[str, Any] = json.loads(self.body)
        assert envelope["success"] is False
        assert envelope["code"] == code
        assert envelope["message"]
        assert envelope["error"]
        return envelope


def read_answer(sock: socket.socket, timeout: float = 10.0) -> Answer | None:
    """The next response on ``sock`` (Content-Length framed), or None if it closed (or
    was reset) first."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        raw_head, _, body = data.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(body) < int(headers["content-length"]):
            chunk = sock.recv(65536)
            if not chunk:
                return None
            body += chunk
    except ConnectionResetError:
        return None
    return Answer(int(lines[0].split()[1]), headers, body)


def closed_by_server(sock: socket.socket, timeout: float = 10.0) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


def memory_kib(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) for name in ("VmRSS", "VmHWM")}


# Size


def test_headers_over_16_kib_get_the_431_envelope_and_the_connection_closes(
    limited: LeadmailServer,
) -> None:
    with connect(limited) as sock:
        sock.sendall(head("/api/v1/leads", secret_of(limited), size=17 * 1024))
        answer = read_answer(sock)

        assert answer is not None
        envelope = answer.envelope(431, "HEADERS_TOO_LARGE")
        assert envelope["message"] == "Request headers too large"
        assert envelope["error"] == "The request's headers are larger than 16384 bytes"
        assert answer.headers["connection"] == "close"
        assert closed_by_server(sock)


def test_headers_at_the_limit_are_served_on_every_request_of_a_connection(
    limited: LeadmailServer,
) -> None:
    with connect(limited) as sock:
        for _ in range(2):
            sock.sendall(head(f"{LEADS}?limit=1", secret_of(limited), size=MAX_HEAD))
            answer = read_answer(sock)
            assert answer is not None
            assert answer.status == 200, answer.body
        # The same connection, one byte over: each request is measured afresh.
        sock.sendall(head(f"{LEADS}?limit=1", secret_of(limited), size=MAX_HEAD + 1))
        answer = read_answer(sock)
        assert answer is not None
        answer.envelope(431, "HEADERS_TOO_LARGE")


def test_a_50_mb_header_is_refused_without_growing_the_servers_memory(
    fresh: LeadmailServer,
) -> None:
    pid = fresh.process.pid
    with fresh.client() as client:  # the first requests' one-off costs, paid beforehand
        client.get("/api/v1/leads")
    before = memory_kib(pid)
    chunk = b"x" * 65536
    sent = 0
    with connect(fresh) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nX-Huge: ")
        try:
            while sent < 50 * 1024 * 1024:
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:  # the server closed the connection: the rest is refused
            pass
        answer = read_answer(sock)
    time.sleep(0.2)
    after = memory_kib(pid)

    grew = {name: after[name] - before[name] for name in before}
    print(f"sent {sent} bytes of one header; the server's memory grew by {grew} KiB")
    assert sent < 50 * 1024 * 1024, "the server read the whole 50 MB"
    assert grew["VmRSS"] < 4096
    assert grew["VmHWM"] < 4096
    if answer is not None:  # a reset can overtake it, when unread bytes were discarded
        answer.envelope(431, "HEADERS_TOO_LARGE")
    with fresh.client() as client:
        assert client.get("/api/v1/leads").status_code == 401  # still serving


# Time


def test_a_client_trickling_its_headers_is_dropped_while_others_are_served(
    limited: LeadmailServer,
) -> None:
    started = time.monotonic()
    with connect(limited) as sock, limited.client(secret_of(limited)) as client:
        sock.sendall(b"GET /api/v1/leads HTTP/1.1\r\n")
        served = []
        while not select.select([sock], [], [], 0.2)[0]:
            sock.sendall(b"X-Slow: 1\r\n")
            served.append(client.get(LEADS, params={"limit": 1}).status_code)
            assert time.monotonic() - started < HEAD_TIMEOUT + 3, "never dropped"
        elapsed = time.monotonic() - started
        answer = read_answer(sock)

        assert answer is not None
        envelope = answer.envelope(408, "REQUEST_TIMEOUT")
        assert envelope["error"] == "The request's headers did not arrive within 1.5 seconds"
        assert closed_by_server(sock)
    assert HEAD_TIMEOUT - 0.1 < elapsed < HEAD_TIMEOUT + 1.5
    assert len(served) >= 4
    assert set(served) == {200}


def test_a_body_that_stalls_is_dropped(limited: LeadmailServer) -> None:
    with connect(limited) as sock:
        body = lead_json()
        sock.sendall(lead_post(secret_of(limited), body[:20], declared=len(body)))
        started = time.monotonic()

        assert closed_by_server(sock)
        elapsed = time.monotonic() - started
    assert BODY_IDLE - 0.1 < elapsed < BODY_IDLE + 1.5


def test_a_slow_but_steady_upload_is_served(limited: LeadmailServer) -> None:
    body = lead_json(padding=2000)
    pieces = [body[i : i + 250] for i in range(0, len(body), 250)]
    with connect(limited) as sock:
        sock.sendall(lead_post(secret_of(limited), b"", declared=len(body)))
        started = time.monotonic()
        for piece in pieces:  # a piece every 0.4 s: never idle for long, slow in all
            time.sleep(0.4)
            sock.sendall(piece)
        answer = read_answer(sock)

    assert time.monotonic() - started > 2 * BODY_IDLE
    assert answer is not None
    assert answer.status == 200, answer.body
    assert json.loads(answer.body)["success"] is True


def test_a_50_mb_upload_at_full_speed_is_served(limited: LeadmailServer) -> None:
    body = lead_json(padding=50 * 1024 * 1024)
    with limited.client(secret_of(limited)) as client:
        response = client.post(
            LEADS, content=body, headers={"Content-Type": "application/json"}, timeout=60
        )

    assert response.status_code == 200, response.text


# How many at once


def test_past_the_cap_a_connection_waits_until_a_served_one_closes(
    limited: LeadmailServer,
) -> None:
    time.sleep(0.3)  # earlier tests' connections are closed on the server's side too
    request = head(f"{LEADS}?limit=1", secret_of(limited))
    served = [connect(limited) for _ in range(CAP)]
    waiting = connect(limited)
    try:
        for sock in served:  # each answered, then kept alive (uvicorn's 5 s)
            sock.sendall(request)
            answer = read_answer(sock)
            assert answer is not None
            assert answer.status == 200
        waiting.sendall(request)

        with pytest.raises(TimeoutError):  # not read, so not answered
            read_answer(waiting, timeout=1.0)
        served[0].close()
        answer = read_answer(waiting, timeout=2.0)
        assert answer is not None
        assert answer.status == 200
    finally:
        for sock in [*served, waiting]:
            sock.close()


# What the parser rejects


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\x01b\r\n\r\n",
        b"GET /\x7f HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"HELLO\r\n\r\n",
    ],
    ids=["control character in a header", "control character in the path", "no request line"],
)
def test_a_request_the_parser_rejects_gets_the_400_envelope(
    limited: LeadmailServer, request_bytes: bytes
) -> None:
    with connect(limited) as sock:
        sock.sendall(request_bytes)
        answer = read_answer(sock)

        assert answer is not None
        envelope = answer.envelope(400, "MALFORMED_REQUEST")
        assert envelope["message"] == "Malformed request"
        assert closed_by_server(sock)
    with httpx.Client(base_url=limited.base_url) as client:
        assert client.get("/api/v1/leads").status_code == 401  # still serving
