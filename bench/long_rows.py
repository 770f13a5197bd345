"""Scenario LR: CSV imports of rows of megabytes through ``leadmail serve`` on Postgres
(issue 24): each file ends, its long rows failed row by row and its other rows imported, in
time linear in its size, while another account's ``GET /api/v1/leads/{id}`` keeps its p99
under 100 ms; and, in this process on the same database, the longest the import job holds
the event loop (bench/loop_lag.py).

Four files, two shapes at two sizes: one line of 20 MB and of 40 MB (the header, then one
row); and 2 MB lines, 10 and 20 of them, each after a good row. Each is POSTed, then polled
until done, three times, with GET /api/v1/leads/{id} of another account read one request at
a time all along (upload included; the three runs' GETs pooled, after 3 s of them with no
import for the floor). Linear: the seconds per MB of the larger size over the smaller's
is about 1 (quadratic would be about 2).
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx

from bench.common import log
from bench.lead_files import Sampler, _quantile, post_and_wait
from bench.loop_lag import measure_loop_lag
from bench.scenarios import LONG_ROWS_ID
from bench.servers import Server

MB = 1_000_000
P99_TARGET_MS = 100.0
LINEAR_RATIO = 1.5  # seconds per MB, larger file over smaller: about 1 if linear, 2 if not
REPEATS = 3  # imports of each file (the median's seconds; every run's GETs)
BEFORE_S = 3.0


def one_line(megabytes: int) -> bytes:
    """The header and one row of ``megabytes`` MB."""
    row = b"lr-one@bench.example.com,One," + b"x" * (megabytes * MB)
    return b"email,name,note\r\n" + row + b"\r\n"


def long_lines(count: int, size: int = 2 * MB) -> bytes:
    """The header, then ``count`` times a good row (a new email each time: every run of
    every file creates its leads) and a row of ``size`` bytes."""
    lines = [b"email,name,note"]
    token = secrets.token_hex(4).encode()
    for n in range(count):
        lines.append(b"lr-%s-%d@bench.example.com,Good %d," % (token, n, n))
        lines.append(b"lr-long-%d@bench.example.com,Long," % n + b"y" * size)
    return b"\r\n".join(lines) + b"\r\n"


FILES: dict[str, tuple[str, Callable[[], bytes], int, int]] = {
    # name: (shape, the file, its good rows, its long rows)
    "one line, 20 MB": ("one line", lambda: one_line(20), 0, 1),
    "one line, 40 MB": ("one line", lambda: one_line(40), 0, 1),
    "2 MB lines x 10": ("2 MB lines", lambda: long_lines(10), 10, 10),
    "2 MB lines x 20": ("2 MB lines", lambda: long_lines(20), 20, 20),
}


def _import(client: httpx.Client, body: bytes) -> dict[str, Any]:
    found, accepted_s, seconds = post_and_wait(client, body, poll=0.05)
    job_s = (_moment(found["finished_at"]) - _moment(found["started_at"])).total_seconds()
    return {"found": found, "seconds": seconds, "accepted_s": accepted_s, "job_s": job_s}


def _right(found: dict[str, Any], good: int, long: int) -> bool:
    return (found["status"], found["created"], found["failed"]) == ("done", good, long)


def _before(pid: int, url: str, key: str, lead_id: str) -> dict[str, float]:
    """GET /leads/{id} for BEFORE_S with no import running: the floor the figures stand on."""
    sampler = Sampler(pid, url, key, lead_id)
    sampler.start()
    time.sleep(BEFORE_S)
    sampler.stop.set()
    sampler.join()
    seen = sampler.latencies_ms
    before = {"p50_ms": round(statistics.median(seen), 2), "p99_ms": _quantile(seen, 0.99)}
    log(f"{LONG_ROWS_ID} GET /leads/{{id}} with no import: {before}")
    return before


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def run_long_rows(server: Server, key: str, other_key: str, db_url: str) -> dict[str, Any]:
    """Each file imported with ``key`` while ``other_key``'s lead is read; then the loop lag
    of the job run in this process on ``db_url``."""
    url, pid = server.url, server.pid
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {other_key}"}) as other:
        probe = other.post(
            "/api/v1/leads", json={"name": "Probe", "email": "lr-probe@bench.example.com"}
        )
        probe.raise_for_status()
    lead_id = probe.json()["data"]["lead_id"]
    found: dict[str, Any] = {"files": {}, "get_lead_before": _before(pid, url, other_key, lead_id)}
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
        for name, (shape, make, good, long) in FILES.items():
            runs, during, errors = [], [], 0
            for _ in range(REPEATS):  # the GETs of all runs pooled: a p99 of hundreds
                body = make()
                sampler = Sampler(pid, url, other_key, lead_id)
                sampler.start()
                try:
                    runs.append(_import(client, body))
                finally:
                    sampler.stop.set()
                    sampler.join()
                during += sampler.latencies_ms
                errors += sampler.errors
            done = sorted(runs, key=lambda r: float(r["seconds"]))[len(runs) // 2]  # median
            wrong = [r["found"] for r in runs if not _right(r["found"], good, long)]
            counts = {k: done["found"][k] for k in ("status", "rows", "created", "failed")}
            row = {
                "shape": shape,
                "mb": round(len(body) / MB, 2),
                "seconds": round(done["seconds"], 2),
                "runs_s": [round(r["seconds"], 2) for r in runs],
                "s_per_mb": round(done["seconds"] / (len(body) / MB), 4),
                "accepted_s": round(done["accepted_s"], 2),
                "job_s": round(done["job_s"], 2),
                **counts,
                "expected": {"created": good, "failed": long},
                "runs_wrong": wrong,
                "get_lead_during": {
                    "requests": len(during),
                    "errors": errors,
                    "p50_ms": _quantile(during, 0.5),
                    "p99_ms": _quantile(during, 0.99),
                    "max_ms": round(max(during), 2) if during else 0.0,
                },
            }
            found["files"][name] = row
            log(
                f"{LONG_ROWS_ID} {name}: {row['status']} ({row['created']} created,"
                f" {row['failed']} failed) in {row['seconds']} s, {row['s_per_mb']:.4f} s/MB"
                f" (upload {row['accepted_s']} s, job {row['job_s']} s); GET /leads/{{id}}"
                f" p99 {row['get_lead_during']['p99_ms']} ms, max"
                f" {row['get_lead_during']['max_ms']} ms"
            )
    found["linearity"] = _linearity(found["files"])
    found["loop_lag"] = measure_loop_lag(db_url)
    return found


def _linearity(files: dict[str, Any]) -> dict[str, Any]:
    """Per shape: seconds per MB of the larger file over the smaller's (POST to done)."""
    out: dict[str, Any] = {}
    for shape in sorted({f["shape"] for f in files.values()}):
        small, large = sorted((f for f in files.values() if f["shape"] == shape), key=_mb)
        ratio = round(large["s_per_mb"] / small["s_per_mb"], 2)
        out[shape] = {"small_mb": small["mb"], "large_mb": large["mb"], "ratio": ratio}
        log(
            f"{LONG_ROWS_ID} {shape}: {small['s_per_mb']:.4f} s/MB at {small['mb']} MB,"
            f" {large['s_per_mb']:.4f} s/MB at {large['mb']} MB: ratio {ratio}"
        )
    return out


def _mb(row: dict[str, Any]) -> float:
    return float(row["mb"])


def with_long_rows(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with LR's figures and their checks (the issue's targets)."""
    if not found:
        return report
    report["long_rows"] = found
    checks = report["checks"]
    for name, row in found["files"].items():
        right = not row["runs_wrong"]
        p99 = row["get_lead_during"]["p99_ms"]
        checks += [
            _check(f"{LONG_ROWS_ID} {name}", "s/MB, POST to done", row["s_per_mb"], " s",
                   "rows right", right),
            _check(f"{LONG_ROWS_ID} p99", f"GET /leads/{{id}} during {name}", p99, " ms",
                   f"<= {P99_TARGET_MS:g} ms", p99 <= P99_TARGET_MS and not
                   row["get_lead_during"]["errors"]),
        ]  # fmt: skip
    for shape, linear in found["linearity"].items():
        checks.append(_check(
            f"{LONG_ROWS_ID} {shape}", f"s/MB at {linear['large_mb']:g} MB over"
            f" {linear['small_mb']:g} MB", linear["ratio"], "", f"<= {LINEAR_RATIO:g}",
            linear["ratio"] <= LINEAR_RATIO))  # fmt: skip
    lag = found["loop_lag"]
    checks.append(_check(f"{LONG_ROWS_ID} loop", "longest CPU between two turns (job)",
                         lag["worst_cpu_ms"], " ms", "", None))  # fmt: skip
    return report


def _check(
    cid: str, title: str, value: float, unit: str, target: str, met: bool | None
) -> dict[str, Any]:
    return {"id": cid, "title": title, "value": value, "unit": unit, "target": target,
            "met": met}  # fmt: skip
