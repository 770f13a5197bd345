"""The HTTP provider's connections: one httpx transport per connection, and the ones free.

httpcore's pool re-examines every pooled connection (a readability syscall each)
whenever a request starts or ends: its cost grows with connections x requests in flight
(9 ms of CPU per request with one pool of 64-100). So each connection is a pool of its
own, and a request takes one that is free (FreeConnections) and calls its transport
directly: no request ever queues inside httpcore, each pool examines one connection, and
the client layers a provider call does not use (redirects, auth flows, cookies, hooks)
are skipped. bench/README.md, "Ceiling C", has the layouts measured.
"""

from __future__ import annotations

import asyncio
import collections
import urllib.request
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

KEEPALIVE_EXPIRY_S = 20.0


def connections_to(base_url: str, count: int) -> list[httpx.AsyncHTTPTransport]:
    """``count`` transports of one connection each to ``base_url``: one TLS context for all
    (building one reads the CA bundle, about 25 ms), and the proxy the environment names
    for that URL (HTTPS_PROXY, NO_PROXY, ...), as an httpx client would use."""
    ssl_context = httpx.create_ssl_context()
    proxy = _proxy_for(base_url)
    limits = httpx.Limits(
        max_connections=1, max_keepalive_connections=1, keepalive_expiry=KEEPALIVE_EXPIRY_S
    )
    return [
        httpx.AsyncHTTPTransport(verify=ssl_context, limits=limits, proxy=proxy)
        for _ in range(count)
    ]


def _proxy_for(url: str) -> str | None:
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


class FreeConnections:
    """The transports whose connection is free, the one freed last taken first (so a quiet
    service keeps reusing one warm connection rather than cycling through cold ones); a
    request that finds none waits its turn here, in arrival order."""

    def __init__(self, transports: Sequence[httpx.AsyncHTTPTransport]) -> None:
        self.transports = tuple(transports)
        self._free = collections.deque(self.transports)
        self._waiting: collections.deque[asyncio.Future[httpx.AsyncHTTPTransport]] = (
            collections.deque()
        )

    async def take(self) -> httpx.AsyncHTTPTransport:
        if self._free:
            return self._free.pop()
        waiter: asyncio.Future[httpx.AsyncHTTPTransport] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give(waiter.result())  # handed over as it was cancelled: pass it on
            raise

    def give(self, transport: httpx.AsyncHTTPTransport) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(transport)
                return
        self._free.append(transport)
