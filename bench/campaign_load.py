"""What K2 measures beside the campaign, and the figures read from the stand-in's tally.

``SendLoad``: ``POST /api/v1/email/send`` from another account, ``CONCURRENCY`` clients
paced to ``RATE`` requests/s in all (a steady load an API sees while a campaign runs, not
a flood that would take the server's core from it), each request's start and latency
kept. ``rates``: recipients/s at the stand-in, overall and in its slowest tenth.
``most_in_any`` (tests/support/moments.py): the most requests within any window.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import httpx

from bench.scenarios import send_body

CONCURRENCY = 8
RATE = 40.0  # requests/s in all, CONCURRENCY clients
WINDOWS = 10  # rates: the campaign's span at the stand-in cut in tenths


class SendLoad(threading.Thread):
    def __init__(self, url: str, key: str) -> None:
        super().__init__(daemon=True)
        self.url, self.key = url, key
        self.samples: list[tuple[float, float, int]] = []  # (started, ms, status)
        self.stop = threading.Event()

    def run(self) -> None:
        asyncio.run(self._clients())

    async def _clients(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        limits = httpx.Limits(max_connections=CONCURRENCY)
        async with httpx.AsyncClient(
            base_url=self.url, headers=headers, limits=limits, timeout=30
        ) as client:
            await asyncio.gather(*(self._client(client, n) for n in range(CONCURRENCY)))

    async def _client(self, client: httpx.AsyncClient, n: int) -> None:
        every = CONCURRENCY / RATE
        token = uuid.uuid4().hex[:8]
        next_at = time.monotonic() + n * every / CONCURRENCY
        count = 0
        while not self.stop.is_set():
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += every
            count += 1
            started = time.monotonic()
            try:
                answer = await client.post(
                    "/api/v1/email/send", json=send_body(f"{token}-{n}-{count}")
                )
                status = answer.status_code
            except httpx.HTTPError:
                status = 0
            self.samples.append((started, (time.monotonic() - started) * 1000, status))

    def during(self, start: float, end: float) -> dict[str, Any]:
        """The requests started between ``start`` and ``end`` (monotonic)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        ms = sorted(s[1] for s in inside)
        return {
            "requests": len(inside),
            "per_s": round(len(inside) / (end - start), 1) if end > start else None,
            "errors": sum(1 for s in inside if s[2] != 200),
            "p50_ms": quantile(ms, 0.5),
            "p99_ms": quantile(ms, 0.99),
            "max_ms": round(ms[-1], 1) if ms else None,
        }


def quantile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def rates(batches: list[list[Any]]) -> dict[str, Any]:
    """Recipients/s from the tally's batches (received_at, delivered, replayed, status):
    over the span from the first batch to the last, and in the slowest of its tenths."""
    delivered = [(b[0], b[1]) for b in batches if b[1]]
    if len(delivered) < 2:
        return {"span_s": None, "per_s": None, "slowest_tenth_per_s": None}
    first, last = delivered[0][0], delivered[-1][0]
    span = last - first
    # A batch is read whole at its moment: the last one closes the span, so it is left
    # out of the overall rate (the span holds the others' deliveries).
    total = sum(n for _, n in delivered[:-1])
    width = span / WINDOWS
    tenths = [0] * WINDOWS
    for moment, n in delivered[:-1]:
        tenths[min(WINDOWS - 1, int((moment - first) / width))] += n
    return {
        "span_s": round(span, 2),
        "per_s": round(total / span, 1),
        "tenths_per_s": [round(n / width, 1) for n in tenths],
        "slowest_tenth_per_s": round(min(tenths) / width, 1),
    }
