"""What leadmail's connection protocol (adapters/http/connections.py) costs a request, alone:
uvicorn's httptools protocol and leadmail's subclass of it, each fed the same keep-alive
requests on one connection over an in-memory transport, answered by the same trivial ASGI
app, on uvloop. The difference per request is the subclass's own work (counting the
head, its clocks, its callbacks); the rest (parsing, the task, the app) is common.

    python -m bench.protocol_cost [--requests 100000] [--rounds 5]

Interleaved rounds; the median of each is printed, in microseconds a request.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import uvicorn
import uvloop
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from leadmail.adapters.http.connections import ConnectionLimits, connection_protocol

BODY = b'{"name":"Ada","email":"ada@example.com"}'
REQUEST = (
    b"POST /api/v1/leads HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: wrk\r\n"
    b"Authorization: Bearer lm_live_0123456789abcdef0123456789abcdef\r\n"
    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)
) + BODY


class Transport(asyncio.Transport):
    """Takes what is written; says when a whole answer has been."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = 0
        self.closing = False

    def write(self, data: Any) -> None:
        if bytes(data).endswith(b"}"):  # the body, the answer's last write
            self.answered += 1

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        return None

    def resume_reading(self) -> None:
        return None


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await receive()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"16")]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    await send({"type": "http.response.body", "body": b'{"success":true}'})


async def per_request_us(protocol_class: type[HttpToolsProtocol], requests: int) -> float:
    config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
    config.load()
    transport = Transport()
    protocol = protocol_class(config, ServerState(), {}, asyncio.get_running_loop())
    protocol.connection_made(transport)
    started = time.perf_counter()
    for n in range(1, requests + 1):
        protocol.data_received(REQUEST)
        # The app's task runs at the loop's next turns (an Event would add its own cost).
        while transport.answered < n:  # noqa: ASYNC110
            await asyncio.sleep(0)
    took = time.perf_counter() - started
    protocol.connection_lost(None)
    return took / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    limits = ConnectionLimits(max_connections=1000, header_timeout=10.0, body_idle=10.0)
    classes: dict[str, type[HttpToolsProtocol]] = {
        "uvicorn": HttpToolsProtocol,
        "leadmail": connection_protocol(limits),
    }
    found: dict[str, list[float]] = {name: [] for name in classes}
    for _ in range(opts.rounds):
        for name, cls in classes.items():
            found[name].append(uvloop.run(per_request_us(cls, opts.requests)))
    medians = {name: statistics.median(times) for name, times in found.items()}
    for name, median in medians.items():
        print(
            f"{name:9} {median:7.2f} us a request  (rounds: {[round(t, 2) for t in found[name]]})"
        )
    print(f"leadmail's protocol adds {medians['leadmail'] - medians['uvicorn']:.2f} us a request")


if __name__ == "__main__":
    main()
