"""How fast one campaign goes: ``python -m bench.campaign_rate --leads 100000``.

On a fresh Postgres database (campaign_rate_rig.py: migrated, one account "bench" with a key
and a second account "other", N leads written by COPY through asyncpg in one round trip),
the stand-in (bench/standin.py ``--tally``) answers like Postmark's batch endpoint after
``--latency``, and ``leadmail serve`` (its worker in process) sends to it with
LEADMAIL_EMAIL_RATE=0 and Postmark's batch of 500. One campaign to every lead is posted,
then polled (GET /api/v1/campaigns/{id}) until done; meanwhile the other account sends one
email at a time (POST /api/v1/email/send) and its latencies are kept. Printed (JSON):
recipients/s for each tenth of the campaign and overall, the server's RSS before, at its
peak and after, the other account's send p50/p99, and whether the stand-in saw each
recipient exactly once.

From another scenario: ``run_campaign(url, key, leads, pid=..., other_key=...)`` against a
server of its own, or ``campaign_rate_rig.measure(leads, postgres_url=...)`` for the whole rig.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from itertools import pairwise
from typing import Any

import httpx

from bench.cpu import rss_mb
from bench.segments import summary

SENDER = "Bench Academy <hello@bench.example.com>"
VARIABLES = {"school_name": "Bench Academy", "courses_link": "https://bench.example.com",
             "contact_email": "hello@bench.example.com"}  # fmt: skip


class OtherSends(threading.Thread):
    """Another account's emails, one at a time every ``gap`` s, until stopped."""

    def __init__(self, url: str, key: str, gap: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.gap = url, key, gap
        self.times: list[float] = []
        self.errors = 0
        self.stop = threading.Event()

    def run(self) -> None:
        body = {"to": "someone@other.example.com", "from": SENDER, "subject": "Hello",
                "html": "<p>Hello from another account</p>"}  # fmt: skip
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=30) as client:
            while not self.stop.wait(self.gap):
                started = time.perf_counter()
                answer = client.post("/api/v1/email/send", json=body)
                self.times.append((time.perf_counter() - started) * 1000)
                self.errors += answer.status_code != 200


def windows(points: list[tuple[float, int]], total: int, parts: int = 10) -> list[float]:
    """Recipients/s within each ``1/parts`` of the campaign, from (seconds, done) polls
    (the moment a share was crossed is interpolated between two polls)."""
    marks, rates, last = [0.0], [], 0.0
    for k in range(1, parts + 1):
        goal = total * k / parts
        for (t0, d0), (t1, d1) in pairwise(points):
            if d0 < goal <= d1:
                marks.append(t0 + (t1 - t0) * (goal - d0) / max(d1 - d0, 1))
                break
    for mark in marks[1:]:
        rates.append(round(total / parts / max(mark - last, 1e-6), 1))
        last = mark
    return rates


def run_campaign(
    url: str, key: str, leads: int, *, pid: int | None = None, other_key: str | None = None,
    poll: float = 0.5, timeout: float = 1800.0,
) -> dict[str, Any]:  # fmt: skip
    """One campaign to every lead of ``key``'s account on a running server, polled until
    done: its rate by tenths and overall, the server's RSS (``pid``) and another
    account's send latencies (``other_key``) while it ran."""
    sends = OtherSends(url, other_key) if other_key else None
    headers = {"Authorization": f"Bearer {key}"}
    rss = [rss_mb(pid)] if pid else []
    body = {"name": "Throughput", "template_id": "welcome", "audience": {},
            "variables": VARIABLES, "from": SENDER}  # fmt: skip
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        if sends:
            sends.start()
        started = time.monotonic()
        answer = client.post("/api/v1/campaigns", json=body)
        answer.raise_for_status()
        campaign = answer.json()["data"]
        points: list[tuple[float, int]] = [(0.0, 0)]
        while campaign["status"] == "running" and time.monotonic() - started < timeout:
            time.sleep(poll)
            campaign = client.get(f"/api/v1/campaigns/{campaign['id']}").json()["data"]
            counts = campaign["counts"]
            points.append((time.monotonic() - started, counts["total"] - counts["pending"]))
            if pid:
                rss.append(rss_mb(pid))
    if sends:
        sends.stop.set()
        sends.join()
    took, done = points[-1]
    found: dict[str, Any] = {
        "leads": leads, "status": campaign["status"], "counts": campaign["counts"],
        "seconds": round(took, 1), "per_second": round(done / max(took, 1e-6), 1),
        "tenths_per_second": windows(points, leads),
    }  # fmt: skip
    if rss:
        found["rss_mb"] = {"before": round(rss[0], 1), "peak": round(max(rss), 1),
                           "after": round(rss[-1], 1),
                           "growth": round(max(rss) - rss[0], 1)}  # fmt: skip
    if sends and sends.times:
        found["other_send"] = {"requests": len(sends.times), "errors": sends.errors,
                               **summary(sends.times)}  # fmt: skip
    return found


def main() -> int:
    from bench import campaign_rate_rig  # the rig runs this module's run_campaign

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leads", type=int, default=100_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--postgres-url", default=os.environ.get(
        "BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a LEADMAIL_* setting of the server, without LEADMAIL_")  # fmt: skip
    parser.add_argument("--db-set", action="append", default=[], metavar="NAME=VALUE",
                        help="ALTER DATABASE ... SET for the server's sessions")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="stop polling after this many seconds (the rate so far)")  # fmt: skip
    parser.add_argument("--profile", action="store_true", help="py-spy on the server")
    parser.add_argument("--keep", action="store_true", help="leave the database")
    parser.add_argument("--no-other", action="store_true", help="no other account's sends")
    args = parser.parse_args()
    settings = {f"LEADMAIL_{k}": v for k, _, v in (s.partition("=") for s in args.set)}
    db_settings = dict(s.split("=", 1) for s in args.db_set)
    found = campaign_rate_rig.measure(
        args.leads, postgres_url=args.postgres_url, latency=args.latency, settings=settings,
        keep=args.keep, other=not args.no_other, db_settings=db_settings, timeout=args.timeout,
        profile=args.profile,
    )  # fmt: skip
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
