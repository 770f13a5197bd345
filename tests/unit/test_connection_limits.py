"""The connection limits (adapters/http/connections.py): the gate's order, and the protocol
driven by hand on a real event loop through a recording transport, with limits in tenths
of a second. The real server over sockets is tests/e2e/test_connection_limits.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from leadmail.adapters.http.connections import (
    ConnectionGate,
    ConnectionLimits,
    LimitedHttpProtocol,
    connection_protocol,
)
from leadmail.adapters.http.error_table import MAX_HEAD_BYTES

TICK = 0.1  # the limits' unit here: long enough for a loaded machine to keep up


class RecordingTransport(asyncio.Transport):
    """What a protocol wrote to its connection, and whether it reads and is open."""

    def __init__(self, protocol: LimitedHttpProtocol) -> None:
        super().__init__()
        self.protocol = protocol
        self.written = bytearray()
        self.reading = True
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )

    def answers(self) -> list[tuple[int, dict[str, str], bytes]]:
        """The responses written so far: status, headers, body (Content-Length framed)."""
        out, rest = [], bytes(self.written)
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in lines[1:])
            length = int(headers["content-length"])
            out.append((int(lines[0].split()[1]), headers, rest[:length]))
            rest = rest[length:]
        return out


async def echo_length(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body (after a pause, on /slow) and answers with its length."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/slow":
        await asyncio.sleep(4 * TICK)
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    body = str(size).encode()
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Rig:
    """Connections of one server (one protocol class, one gate) under small limits."""

    def __init__(self, max_connections: int = 10) -> None:
        limits = ConnectionLimits(
            max_connections=max_connections, header_timeout=3 * TICK, body_idle=3 * TICK
        )
        self.protocol_class = connection_protocol(limits)
        self.config = Config(echo_length, http=self.protocol_class, lifespan="off")
        self.config.load()
        self.state = ServerState()

    def connect(self) -> RecordingTransport:
        protocol = self.protocol_class(
            config=self.config,
            server_state=self.state,
            app_state={},
            _loop=asyncio.get_running_loop(),
        )
        transport = RecordingTransport(protocol)
        protocol.connection_made(transport)
        return transport


async def settle(seconds: float = TICK) -> None:
    await asyncio.sleep(seconds)


def get(path: str = "/", size: int = 0) -> bytes:
    """A GET whose head is exactly ``size`` bytes (padded with one header), if given."""
    head = f"GET {path} HTTP/1.1\r\nHost: test\r\n".encode()
    if size:
        padding = size - len(head) - len(b"X-Pad: \r\n\r\n")
        head += b"X-Pad: " + b"p" * padding + b"\r\n"
    head += b"\r\n"
    assert not size or len(head) == size
    return head


def post(body: bytes, path: str = "/", declared: int | None = None) -> bytes:
    length = len(body) if declared is None else declared
    return f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Length: {length}\r\n\r\n".encode() + (
        body
    )


def assert_refused(transport: RecordingTransport, status: int, code: str) -> dict[str, Any]:
    [(got, headers, body)] = transport.answers()
    assert got == status
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    envelope = json.loads(body)
    assert envelope["success"] is False
    assert envelope["code"] == code
    assert envelope["message"]
    assert envelope["error"]
    assert transport.closed
    return dict(envelope)


# The gate


def test_the_gate_serves_up_to_its_capacity_then_queues_in_arrival_order() -> None:
    gate: ConnectionGate[str] = ConnectionGate(2)

    assert [gate.arrive(c) for c in "abcde"] == [True, True, False, False, False]
    assert (gate.served, gate.waiting) == (2, 3)
    assert gate.leave("b") == ["c"]
    assert gate.leave("a") == ["d"]
    assert (gate.served, gate.waiting) == (2, 1)


def test_a_waiting_connection_that_leaves_gives_up_its_turn_and_leaving_twice_is_harmless() -> None:
    gate: ConnectionGate[str] = ConnectionGate(1)
    for c in "abc":
        gate.arrive(c)

    assert gate.leave("b") == []
    assert gate.leave("b") == []
    assert gate.leave("a") == ["c"]
    assert gate.leave("a") == []
    assert (gate.served, gate.waiting) == (1, 0)


def test_a_gate_serves_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ConnectionGate[str](0)


# Heads


async def test_a_head_of_exactly_the_limit_is_served_and_one_byte_more_is_refused() -> None:
    rig = Rig()
    served, refused = rig.connect(), rig.connect()

    served.protocol.data_received(get(size=MAX_HEAD_BYTES))
    refused.protocol.data_received(get(size=MAX_HEAD_BYTES + 1))
    await settle()

    assert served.answers()[0][0] == 200
    assert not served.closed
    envelope = assert_refused(refused, 431, "HEADERS_TOO_LARGE")
    assert envelope["message"] == "Request headers too large"
    assert envelope["error"] == f"The request's headers are larger than {MAX_HEAD_BYTES} bytes"


async def test_a_head_arriving_in_pieces_is_refused_once_past_the_limit() -> None:
    rig = Rig()
    transport = rig.connect()
    piece = b"X-Slow: " + b"s" * 1000 + b"\r\n"

    transport.protocol.data_received(b"GET / HTTP/1.1\r\n")
    sent = 16
    while not transport.closed:
        transport.protocol.data_received(piece)
        sent += len(piece)
    await settle()

    assert_refused(transport, 431, "HEADERS_TOO_LARGE")
    assert MAX_HEAD_BYTES < sent <= MAX_HEAD_BYTES + len(piece)


async def test_a_head_and_a_large_body_in_one_chunk_are_served() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(post(b"b" * 100_000))
    await settle()

    [(status, _, body)] = transport.answers()
    assert (status, body) == (200, b"100000")


async def test_every_request_of_a_keep_alive_connection_is_measured() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(get(size=MAX_HEAD_BYTES))
    await settle()
    transport.protocol.data_received(get(size=MAX_HEAD_BYTES + 1))
    await settle()

    statuses = [status for status, _, _ in transport.answers()]
    assert statuses == [200, 431]
    assert transport.closed


async def test_pipelined_requests_in_one_chunk_are_each_served() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(post(b"x" * 10) + get("/a") + post(b"y" * 5))
    await settle()

    assert [(s, b) for s, _, b in transport.answers()] == [(200, b"10"), (200, b"0"), (200, b"5")]


async def test_a_pipelined_head_is_measured_from_what_was_parsed_then_as_it_arrives() -> None:
    rig = Rig()
    transport = rig.connect()

    # Where a head that follows another message in the same chunk began is not known:
    # it is counted from the header lines parsed, then by bytes as they arrive.
    transport.protocol.data_received(get() + b"GET / HTTP/1.1\r\nX-Pad: " + b"p" * 1000)
    await settle()
    more = 0
    while not transport.closed:
        transport.protocol.data_received(b"p" * 1000)
        more += 1000
    await settle()

    assert [status for status, _, _ in transport.answers()] == [200, 431]
    assert MAX_HEAD_BYTES - 1000 < more <= MAX_HEAD_BYTES + 1000


async def test_a_header_with_a_control_character_gets_the_400_envelope() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(b"GET / HTTP/1.1\r\nHost: test\r\nX-Bad: a\x01b\r\n\r\n")
    await settle()

    envelope = assert_refused(transport, 400, "MALFORMED_REQUEST")
    assert envelope["message"] == "Malformed request"


# Time


async def test_a_head_that_trickles_past_the_timeout_gets_a_408() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(b"GET / HTTP/1.1\r\n")
    for _ in range(5):  # never silent for long, but never done
        await settle(TICK)
        if not transport.closed:
            transport.protocol.data_received(b"X-Slow: 1\r\n")
    await settle()

    envelope = assert_refused(transport, 408, "REQUEST_TIMEOUT")
    assert envelope["error"] == "The request's headers did not arrive within 0.3 seconds"


async def test_a_connection_idle_between_requests_is_left_to_keep_alive() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(get())
    await settle(6 * TICK)  # twice the head timeout; uvicorn's keep-alive is 5 s
    transport.protocol.data_received(get())
    await settle()

    assert [status for status, _, _ in transport.answers()] == [200, 200]
    assert not transport.closed


async def test_a_body_that_stalls_closes_the_connection_without_an_answer() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(post(b"x" * 10, declared=100))
    await settle(5 * TICK)

    assert transport.closed
    assert transport.answers() == []


async def test_a_body_that_keeps_moving_is_not_dropped() -> None:
    rig = Rig()
    transport = rig.connect()

    transport.protocol.data_received(post(b"", declared=10))
    for _ in range(10):  # 1 s in all, more than three times the idle limit
        await settle(TICK)
        transport.protocol.data_received(b"x")
    await settle()

    assert transport.answers()[0][2] == b"10"
    assert not transport.closed


async def test_a_body_the_app_is_slow_to_read_is_not_the_clients_stall() -> None:
    rig = Rig()
    transport = rig.connect()

    # Over uvicorn's 64 KiB buffer: reading pauses until the app, busy for longer than
    # the idle limit, asks for the body.
    transport.protocol.data_received(post(b"x" * 70_000, path="/slow", declared=80_000))
    assert not transport.reading
    await settle(6 * TICK)
    assert transport.reading
    transport.protocol.data_received(b"y" * 10_000)
    await settle()

    assert transport.answers()[0][2] == b"80000"
    assert not transport.closed


# The gate on a server


async def test_past_the_cap_a_connection_is_not_read_until_a_served_one_closes() -> None:
    rig = Rig(max_connections=2)
    first, second = rig.connect(), rig.connect()
    third, fourth = rig.connect(), rig.connect()
    for served in (first, second):  # then idle, kept alive: uvicorn's timeout, 5 s
        served.protocol.data_received(get())

    assert (third.reading, fourth.reading) == (False, False)
    third.protocol.data_received(get("/third"))  # uvloop may read once before the pause
    await settle(5 * TICK)  # past the head timeout: a waiting connection's clock is stopped
    assert third.answers() == []
    assert not third.closed

    first.close()
    await settle()
    assert third.reading
    assert [status for status, _, _ in third.answers()] == [200]
    assert not fourth.reading
    second.close()
    await settle()
    assert fourth.reading
