"""The HTTP provider's connections: taken free (the last freed first), waited for in
arrival order, never lost to a cancelled wait; and the proxy the environment names."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from leadmail.adapters.mail.connections import FreeConnections, _proxy_for, connections_to


def three() -> tuple[FreeConnections, list[httpx.AsyncHTTPTransport]]:
    transports = connections_to("http://127.0.0.1:9", 3)
    return FreeConnections(transports), transports


async def test_the_connection_freed_last_is_taken_first() -> None:
    free, _ = three()
    first = await free.take()
    free.give(first)

    assert await free.take() is first


async def test_waiters_are_served_in_arrival_order() -> None:
    free, transports = three()
    taken = [await free.take() for _ in transports]
    waiting = [asyncio.create_task(free.take()) for _ in range(2)]
    await asyncio.sleep(0)

    free.give(taken[0])
    free.give(taken[1])

    assert [await w for w in waiting] == [taken[0], taken[1]]


async def test_a_cancelled_wait_loses_no_connection() -> None:
    free, transports = three()
    taken = [await free.take() for _ in transports]
    gone = asyncio.create_task(free.take())
    after = asyncio.create_task(free.take())
    await asyncio.sleep(0)

    free.give(taken[0])  # handed to the first waiter...
    gone.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await gone

    assert await after is taken[0]


def test_the_environment_names_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "mailpit.internal")

    assert _proxy_for("https://api.resend.com") == "http://proxy.internal:3128"
    assert _proxy_for("https://mailpit.internal:8025") is None
    assert _proxy_for("http://api.resend.com") is None  # no HTTP_PROXY
