"""Limits on each HTTP connection, enforced before a request reaches the app: the size of a
request's head (request line and headers), how long its head and body may take to arrive,
and how many connections are served at once. Refusals answer in the API's envelope.

uvicorn's httptools protocol, subclassed: httptools buffers an unfinished header whole and
has no size limit, uvicorn only times out idle keep-alive connections, and it answers a
request the parser rejects in plain text. ``connection_protocol`` gives the class to pass
as ``uvicorn.Config(http=...)``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import msgspec
import structlog
from uvicorn.config import Config
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from leadmail.adapters.http.envelopes import Failure
from leadmail.adapters.http.error_table import (
    HEADERS_TOO_LARGE,
    MALFORMED_REQUEST,
    MAX_HEAD_BYTES,
    REQUEST_TIMEOUT,
    ErrorKind,
    head_too_large,
)

log = structlog.get_logger("leadmail.http")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_connections: int  # served at once by this process; later ones wait their turn
    header_timeout: float  # seconds for a request's whole head to arrive
    body_idle: float  # seconds a request's body may stall while the server waits for it
    max_head_bytes: int = MAX_HEAD_BYTES


C = TypeVar("C")


class ConnectionGate(Generic[C]):
    """At most ``capacity`` connections served at once; the others wait, and are served
    in the order they arrived as served ones leave."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a gate serves at least one connection")
        self.capacity = capacity
        self._served: set[C] = set()
        self._waiting: dict[C, None] = {}  # insertion-ordered: the queue, with O(1) removal

    @property
    def served(self) -> int:
        return len(self._served)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def arrive(self, connection: C) -> bool:
        """True: serve ``connection`` now; False: it waits until ``leave`` hands it over."""
        if len(self._served) < self.capacity:
            self._served.add(connection)
            return True
        self._waiting[connection] = None
        return False

    def leave(self, connection: C) -> list[C]:
        """``connection`` is gone (served or waiting; leaving twice is harmless): the
        waiting connections that now take its place, oldest first, to be served."""
        self._waiting.pop(connection, None)
        self._served.discard(connection)
        admitted: list[C] = []
        while self._waiting and len(self._served) < self.capacity:
            first = next(iter(self._waiting))
            del self._waiting[first]
            self._served.add(first)
            admitted.append(first)
        return admitted


def refusal(kind: ErrorKind, error: str, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """A whole HTTP/1.1 response carrying the failure envelope, closing the connection."""
    body = msgspec.json.encode(
        Failure(success=False, message=kind.message, error=error, code=kind.code)
    )
    head = [STATUS_LINE[kind.status]]
    head += [name + b": " + value + b"\r\n" for name, value in default_headers]
    head.append(
        b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
        % len(body)
    )
    return b"".join(head) + body


class _DemandClock(FlowControl):
    """uvicorn's flow control, noting when the server last asked for more of a body: the
    app reads it through ``receive``, which resumes reading each time. While the app has
    not asked, or reading is paused, a silent client is not stalling."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(transport)
        self._loop = loop
        self.asked_at = 0.0

    def resume_reading(self) -> None:
        self.asked_at = self._loop.time()
        super().resume_reading()


class LimitedHttpProtocol(HttpToolsProtocol):
    """One HTTP/1.1 connection under ``limits``; built by ``connection_protocol``.

    - A request's head (request line and headers) is counted as its bytes arrive; past
      ``max_head_bytes`` the answer is a 431 and the connection closes, so no more than
      the limit plus one read of a head is ever held.
    - The first request's head must arrive within ``header_timeout`` of the connection
      being served, a later one's within ``header_timeout`` of its first byte (the wait
      between requests is uvicorn's ``timeout_keep_alive``): else a 408 and the close.
    - A body that stalls for ``body_idle`` while the server waits for it closes the
      connection (an answer may already be under way, so none is sent).
    - A request the parser rejects is answered with a 400 envelope.
    - Past ``max_connections`` a new connection is not read until a served one closes.
    """

    limits: ClassVar[ConnectionLimits]
    gate: ClassVar[ConnectionGate[LimitedHttpProtocol]]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._in_head = True  # from the connection's start, or a message's end, to a head's
        self._head_bytes = 0
        self._heads = 0  # heads completed on this connection
        self._head_since: float | None = None  # when the head's clock started; None: idle
        self._in_body = False
        self._last_read = 0.0
        self._message_ended_in_chunk = False
        self._head_began_mid_chunk = False
        self._watch: asyncio.TimerHandle | None = None
        self._closed = False
        self._early: bytes | None = None  # while waiting for the gate: what arrived anyway

    # Connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = _DemandClock(transport, self.loop)
        if self.gate.arrive(self):
            self._serve()
        else:
            # Works on asyncio's loop; uvloop starts reading after this returns, so the
            # first chunk may still arrive: data_received keeps it and pauses then.
            self._early = b""
            transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)
        finally:
            self._give_up_place()

    def handle_websocket_upgrade(self) -> None:
        # The WebSocket protocol takes the transport over, and this one never hears of
        # it closing: its place is given up now, and so are its timers.
        self._give_up_place()
        super().handle_websocket_upgrade()

    def _give_up_place(self) -> None:
        self._closed = True
        self._stop_watch()
        for admitted in self.gate.leave(self):
            admitted._serve()

    def _serve(self) -> None:
        if self._closed:
            return
        self._head_since = self.loop.time()
        self._arm(self._head_since + self.limits.header_timeout)
        early, self._early = self._early, None
        if early is not None:
            self.transport.resume_reading()
            if early:
                self.data_received(early)

    # Reading

    def data_received(self, data: bytes) -> None:
        if self._early is not None:  # not served yet
            self._early += data
            self.transport.pause_reading()
            return
        self._last_read = self.loop.time()
        self._message_ended_in_chunk = False
        if self._in_head:
            self._read_head(data)
        else:
            super().data_received(data)
        if self._head_began_mid_chunk and self._in_head and not self.transport.is_closing():
            # A pipelined head begun after another message in this chunk: where it began
            # is unknown, so its size so far is what the parser has handed over.
            self._head_began_mid_chunk = False
            self._head_bytes = self._parsed_head_bytes()
            if self._head_bytes > self.limits.max_head_bytes:
                self._refuse_large_head()

    def _read_head(self, data: bytes) -> None:
        room = self.limits.max_head_bytes - self._head_bytes
        if len(data) <= room:
            self._head_bytes += len(data)
            super().data_received(data)
            return
        heads = self._heads
        view = memoryview(data)
        if room > 0:
            self._head_bytes += room
            super().data_received(view[:room])  # type: ignore[arg-type]
        if self.transport.is_closing():
            return
        if self._heads == heads:
            self._refuse_large_head()
            return
        super().data_received(view[room:])  # type: ignore[arg-type]

    def _parsed_head_bytes(self) -> int:
        # The request line's URL and each "name: value\r\n" line; what httptools still
        # holds of an unfinished header is less than one read.
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def _refuse_large_head(self) -> None:
        limit = self.limits.max_head_bytes
        self._refuse(HEADERS_TOO_LARGE, head_too_large(limit))

    # Parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_began_mid_chunk = self._message_ended_in_chunk
        if self._head_since is None:
            self._head_since = self.loop.time()
            self._arm(self._head_since + self.limits.header_timeout)

    def on_headers_complete(self) -> None:
        if self._head_began_mid_chunk:
            self._head_began_mid_chunk = False
            if self._parsed_head_bytes() > self.limits.max_head_bytes:
                self._refuse_large_head()
                # Stops the parser: the rest of this chunk is not this server's to read.
                raise _Refused
        self._in_head = False
        self._heads += 1
        self._head_since = None
        self._in_body = True
        self._arm(self._last_read + self.limits.body_idle)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_body = False
        self._in_head = True
        self._head_bytes = 0
        self._message_ended_in_chunk = True
        super().on_message_complete()

    def send_400_response(self, msg: str) -> None:
        if self.transport.is_closing():  # answered already (a head too large)
            return
        self._refuse(
            MALFORMED_REQUEST,
            "The request is not valid HTTP/1.1: a malformed request line or header",
            logged=True,  # by uvicorn, as "Invalid HTTP request received."
        )

    # Timers: one per connection, armed for the nearest deadline; it re-arms itself, so
    # reading a chunk costs a clock read, not a timer.

    def _arm(self, due: float) -> None:
        watch = self._watch
        if watch is not None:
            if watch.when() <= due:
                return
            watch.cancel()
        self._watch = self.loop.call_at(due, self._check)

    def _stop_watch(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None

    def _check(self) -> None:
        self._watch = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        if self._head_since is not None:
            due = self._head_since + self.limits.header_timeout
            if now >= due:
                timeout = self.limits.header_timeout
                self._refuse(
                    REQUEST_TIMEOUT,
                    f"The request's headers did not arrive within {timeout:g} seconds",
                )
                return
        elif self._in_body:
            due = self._body_due(now)
            if now >= due:
                log.warning("connection_dropped", reason="BODY_STALLED", client=self._peer())
                self.transport.close()
                return
        else:
            return  # between requests: uvicorn's keep-alive timeout governs
        self._watch = self.loop.call_at(due, self._check)

    def _body_due(self, now: float) -> float:
        cycle = self.cycle
        flow = self.flow
        assert isinstance(flow, _DemandClock)
        if flow.read_paused or (cycle is not None and cycle.waiting_for_100_continue):
            return now + self.limits.body_idle  # the server's turn, not the client's
        return max(self._last_read, flow.asked_at) + self.limits.body_idle

    def _refuse(self, kind: ErrorKind, error: str, *, logged: bool = False) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            # Unless a pipelined request's answer is still being written, which this
            # would cut into.
            self.transport.write(refusal(kind, error, self.server_state.default_headers))
        self.transport.close()
        if not logged:
            log.warning("connection_refused", code=kind.code, client=self._peer())

    def _peer(self) -> str:
        return self.client[0] if self.client else ""


class _Refused(Exception):
    """Raised from a parser callback to stop parsing a connection already answered."""


def connection_protocol(limits: ConnectionLimits) -> type[LimitedHttpProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` whose connections share one gate:
    make one per server."""

    class LeadmailHttpProtocol(LimitedHttpProtocol):
        pass

    LeadmailHttpProtocol.limits = limits
    LeadmailHttpProtocol.gate = ConnectionGate(limits.max_connections)
    return LeadmailHttpProtocol
