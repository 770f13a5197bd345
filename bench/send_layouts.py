"""Ceiling C's provider call (bench/ceiling_send.py), set up as ``Layout`` says, so that
``python -m bench.httpx_layouts`` can measure the ways httpx can be set up; the defaults
are the fastest found (bench/README.md, "Ceiling C"). From the environment:

- ``BENCH_SEND_CLIENTS`` x ``BENCH_SEND_CONNECTIONS``: that many ``httpx.AsyncClient``s,
  each with a pool of that many connections (keep-alive for all of them);
- ``BENCH_SEND_PICK``: ``free``, a request takes a client that has a connection free (a
  FIFO of free slots, each client in it once per connection) and gives it back after;
  ``rr``, clients in turn whatever they hold (leadmail's way before issue 16);
- ``BENCH_SEND_CALL``: ``client``, ``AsyncClient.send`` (auth, redirects, cookies, hooks);
  ``transport``, the client's transport directly (``handle_async_request``), which skips
  those layers and is still httpx's public API;
- ``BENCH_SEND_KEEPALIVE_EXPIRY``: seconds an idle connection is kept (httpx's default 5),
  ``none`` for no limit.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
from dataclasses import dataclass

import httpx
import msgspec
from litestar.exceptions import HTTPException

# The fastest layout measured (bench/README.md, "Ceiling C").
DEFAULT_CLIENTS = 64
DEFAULT_CONNECTIONS = 1
DEFAULT_PICK = "free"
DEFAULT_CALL = "transport"
DEFAULT_KEEPALIVE_EXPIRY = "5"
TIMEOUT_S = 10.0


class SendBody(msgspec.Struct, forbid_unknown_fields=True, rename={"sender": "from"}):
    to: str
    subject: str
    html: str
    sender: str


@dataclass(frozen=True)
class Layout:
    """One way of setting httpx up: written ``CLIENTSxCONNECTIONS:PICK[:CALL[:EXPIRY]]`` by
    bench.httpx_layouts, handed to the server in BENCH_SEND_* variables."""

    clients: int
    connections: int
    pick: str  # "free" or "rr"
    call: str  # "client" or "transport"
    expiry: str  # the keep-alive expiry: seconds, or "none"

    def __post_init__(self) -> None:
        if self.pick not in ("free", "rr") or self.call not in ("client", "transport"):
            raise ValueError(f"not a layout: {self}")

    @classmethod
    def parse(cls, text: str) -> Layout:
        size, pick, *rest = text.split(":")
        clients, connections = (int(n) for n in size.split("x"))
        call = rest[0] if rest else "client"
        expiry = rest[1] if len(rest) > 1 else DEFAULT_KEEPALIVE_EXPIRY
        return cls(clients, connections, pick, call, expiry)

    @classmethod
    def from_env(cls) -> Layout:
        return cls(
            clients=int(os.environ.get("BENCH_SEND_CLIENTS", DEFAULT_CLIENTS)),
            connections=int(os.environ.get("BENCH_SEND_CONNECTIONS", DEFAULT_CONNECTIONS)),
            pick=os.environ.get("BENCH_SEND_PICK", DEFAULT_PICK),
            call=os.environ.get("BENCH_SEND_CALL", DEFAULT_CALL),
            expiry=os.environ.get("BENCH_SEND_KEEPALIVE_EXPIRY", DEFAULT_KEEPALIVE_EXPIRY),
        )

    @property
    def name(self) -> str:
        tail = "" if self.expiry == DEFAULT_KEEPALIVE_EXPIRY else f":{self.expiry}"
        return f"{self.clients}x{self.connections}:{self.pick}:{self.call}{tail}"

    def env(self) -> dict[str, str]:
        return {
            "BENCH_SEND_CLIENTS": str(self.clients),
            "BENCH_SEND_CONNECTIONS": str(self.connections),
            "BENCH_SEND_PICK": self.pick,
            "BENCH_SEND_CALL": self.call,
            "BENCH_SEND_KEEPALIVE_EXPIRY": self.expiry,
        }

    @property
    def keepalive_expiry(self) -> float | None:
        return None if self.expiry == "none" else float(self.expiry)


class FreeSlots:
    """Clients with a connection free, first in first out: each client is in it once per
    free connection, so a request never queues inside httpcore's pool. Waiters queue here
    in arrival order when every connection is busy."""

    def __init__(self, clients: int, connections: int) -> None:
        self._free: collections.deque[int] = collections.deque(
            c for _ in range(connections) for c in range(clients)
        )
        self._waiters: collections.deque[asyncio.Future[int]] = collections.deque()

    async def take(self) -> int:
        if self._free:
            return self._free.popleft()
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return await waiter

    def give(self, client: int) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(client)
                return
        self._free.append(client)


class Provider:
    """The stand-in, called through httpx as ``Layout`` says."""

    def __init__(self, base_url: str, api_key: str, layout: Layout) -> None:
        self.layout = layout
        limits = httpx.Limits(
            max_connections=layout.connections,
            max_keepalive_connections=layout.connections,
            keepalive_expiry=layout.keepalive_expiry,
        )
        self._transports = [httpx.AsyncHTTPTransport(limits=limits) for _ in range(layout.clients)]
        self._clients = [
            httpx.AsyncClient(transport=t, timeout=TIMEOUT_S, follow_redirects=False)
            for t in self._transports
        ]
        self._url = httpx.URL(base_url.rstrip("/") + "/emails")
        self._auth = f"Bearer {api_key}"
        self._slots = FreeSlots(layout.clients, layout.connections)
        self._turn = itertools.count()
        self._timeout = httpx.Timeout(TIMEOUT_S).as_dict()

    async def send(self, body: SendBody, message_id: str, text: str | None = None) -> str:
        message = {"from": body.sender, "to": [body.to], "subject": body.subject, "html": body.html}
        if text:
            message["text"] = text
        content = msgspec.json.encode(message)
        headers = {
            "Authorization": self._auth,
            "Content-Type": "application/json",
            "Idempotency-Key": message_id,
        }
        if self.layout.pick == "free":
            index = await self._slots.take()
            try:
                return await self._post(index, content, headers)
            finally:
                self._slots.give(index)
        return await self._post(next(self._turn) % len(self._clients), content, headers)

    async def _post(self, index: int, content: bytes, headers: dict[str, str]) -> str:
        client = self._clients[index]
        if self.layout.call == "client":
            response = await client.post(self._url, content=content, headers=headers)
            return _provider_id(response.status_code, response.content)
        request = client.build_request("POST", self._url, content=content, headers=headers)
        request.extensions["timeout"] = self._timeout
        response = await self._transports[index].handle_async_request(request)
        try:
            return _provider_id(response.status_code, await response.aread())
        finally:
            await response.aclose()

    async def close(self) -> None:
        for client in self._clients:
            await client.aclose()


def _provider_id(status: int, content: bytes) -> str:
    if status != 200:
        raise HTTPException(status_code=502, detail=f"the stand-in answered {status}")
    provider_id: str = msgspec.json.decode(content)["id"]
    return provider_id
