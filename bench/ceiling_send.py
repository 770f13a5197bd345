"""Ceiling C: what a send must do and nothing more, as a bare Litestar app.

``POST /send`` decodes a send-shaped body, then:

1. one asyncpg ``INSERT`` of the message, pending, into leadmail's ``messages`` table (same
   columns, keys and foreign key; autocommit, no explicit transaction);
2. one httpx ``POST /emails`` to the provider stand-in, Resend's request (JSON body,
   bearer key, the message id as Idempotency-Key), its answer's ``id`` read back;
3. one asyncpg ``UPDATE`` of the message to sent, by its primary key.

The UPDATE names the primary key alone. leadmail's also names the account, and a prepared
statement planned while ``messages`` is empty (a fresh database, and this machine's
Postgres runs without autovacuum, so without statistics) keeps a generic plan that scans
the account's ``(account_id, created_at)`` index, every message of the account, on each
update: bench/README.md, "Issue 16". A ceiling does not copy that.

No authentication, validation beyond types, retries, timeouts beyond httpx's, logging or
error envelope: a limit, not a service. The Postgres pool is ceiling B's (leadmail's size,
the light release).

How the provider is called is configurable, so that ``python -m bench.httpx_layouts`` can
measure the ways httpx can be set up; the defaults are the fastest found (bench/README.md,
"Ceiling C"):

- ``BENCH_SEND_CLIENTS`` x ``BENCH_SEND_CONNECTIONS``: that many ``httpx.AsyncClient``s,
  each with a pool of that many connections (keep-alive for all of them);
- ``BENCH_SEND_PICK``: ``free``, a request takes a client that has a connection free (a
  FIFO of free slots, each client in it once per connection) and gives it back after;
  ``rr``, clients in turn whatever they hold (leadmail's way);
- ``BENCH_SEND_CALL``: ``client``, ``AsyncClient.send`` (auth, redirects, cookies, hooks);
  ``transport``, the client's transport directly (``handle_async_request``), which skips
  those layers and is still httpx's public API;
- ``BENCH_SEND_KEEPALIVE_EXPIRY``: seconds an idle connection is kept (httpx's default 5),
  ``none`` for no limit.

Served like the other ceilings, e.g.

    BENCH_DATABASE_URL=postgresql://... BENCH_ACCOUNT_ID=acc_... \\
        BENCH_PROVIDER_URL=http://127.0.0.1:PORT BENCH_PROVIDER_KEY=re_... \\
        uvicorn bench.ceiling_send:send_app --no-access-log --loop uvloop --http httptools
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import httpx
import msgspec
from litestar import Litestar, post
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.params import JSONBody

from bench.ceilings import Envelope
from leadmail.adapters.db.pool import light_reset
from leadmail.config import Settings

# The fastest layout measured (bench/README.md, "Ceiling C").
DEFAULT_CLIENTS = 64
DEFAULT_CONNECTIONS = 1
DEFAULT_PICK = "free"
DEFAULT_CALL = "transport"
DEFAULT_KEEPALIVE_EXPIRY = "5"
PROVIDER = "resend"
TIMEOUT_S = 10.0


class SendBody(msgspec.Struct, forbid_unknown_fields=True, rename={"sender": "from"}):
    to: str
    subject: str
    html: str
    sender: str


class MessageOut(msgspec.Struct):
    message_id: str
    status: str
    provider: str
    provider_message_id: str
    created_at: datetime
    updated_at: datetime


INSERT = """
INSERT INTO messages (message_id, account_id, sender, recipients, subject, template_id,
                      status, provider, provider_message_id, attempts, last_error,
                      created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, NULL, 'pending', $6, NULL, 0, '', $7, $7)
"""
UPDATE = """
UPDATE messages SET status = 'sent', attempts = 1, provider_message_id = $2,
                    last_error = '', updated_at = $3
WHERE message_id = $1
"""


@dataclass(frozen=True)
class Layout:
    clients: int
    connections: int
    pick: str  # "free" or "rr"
    call: str  # "client" or "transport"
    keepalive_expiry: float | None

    @classmethod
    def from_env(cls) -> Layout:
        layout = cls(
            clients=int(os.environ.get("BENCH_SEND_CLIENTS", DEFAULT_CLIENTS)),
            connections=int(os.environ.get("BENCH_SEND_CONNECTIONS", DEFAULT_CONNECTIONS)),
            pick=os.environ.get("BENCH_SEND_PICK", DEFAULT_PICK),
            call=os.environ.get("BENCH_SEND_CALL", DEFAULT_CALL),
            keepalive_expiry=_seconds(
                os.environ.get("BENCH_SEND_KEEPALIVE_EXPIRY", DEFAULT_KEEPALIVE_EXPIRY)
            ),
        )
        if layout.pick not in ("free", "rr") or layout.call not in ("client", "transport"):
            raise ValueError(f"unknown layout {layout}")
        return layout


def _seconds(text: str) -> float | None:
    return None if text == "none" else float(text)


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

    async def send(self, body: SendBody, message_id: str) -> str:
        content = msgspec.json.encode(
            {"from": body.sender, "to": [body.to], "subject": body.subject, "html": body.html}
        )
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


@contextlib.asynccontextmanager
async def _resources(app: Litestar) -> AsyncIterator[None]:
    settings = Settings.from_env()
    pool = await asyncpg.create_pool(
        os.environ["BENCH_DATABASE_URL"],
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        reset=light_reset,
    )
    provider = Provider(
        os.environ["BENCH_PROVIDER_URL"], os.environ["BENCH_PROVIDER_KEY"], Layout.from_env()
    )
    app.state.pool = pool
    app.state.provider = provider
    app.state.account_id = os.environ["BENCH_ACCOUNT_ID"]
    try:
        yield
    finally:
        await provider.close()
        await pool.close()


@post("/send", status_code=200)
async def send(data: JSONBody[SendBody], state: State) -> Envelope:
    pool, account_id = state.pool, state.account_id
    message_id = "msg_" + secrets.token_urlsafe(16)
    created = datetime.now(UTC)
    await pool.execute(
        INSERT, message_id, account_id, data.sender, json.dumps([data.to]), data.subject,
        PROVIDER, created,
    )  # fmt: skip
    provider_id = await state.provider.send(data, message_id)
    updated = datetime.now(UTC)
    await pool.execute(UPDATE, message_id, provider_id, updated)
    return Envelope(
        success=True,
        message="Email sent",
        error="",
        data=MessageOut(message_id, "sent", PROVIDER, provider_id, created, updated),
    )


send_app = Litestar(route_handlers=[send], lifespan=[_resources], logging_config=None)
