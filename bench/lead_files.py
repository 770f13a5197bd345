"""Scenarios IM and EX: CSV import and export of 100,000 leads through ``leadmail serve`` on
Postgres.

IM: a 100,000-row file (about 10 MB: name, source, note, phone, tags, two custom fields;
every 50th row bad, every 100th a repeat of the email of one of the first thousand rows) is
POSTed, then the import is polled until done. Meanwhile one client reads
``GET /api/v1/leads/{id}`` one request at a time (the latency other requests see while the
job runs in the same process), and the server's RSS is sampled every 100 ms. EX: the whole
account is exported (``GET /api/v1/leads/export``), read as it streams, with RSS sampled
likewise.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

import httpx

from bench.common import log
from bench.cpu import rss_mb
from bench.scenarios import EXPORT_ID, IMPORT_ID
from bench.servers import Server

ROWS = 100_000
IMPORT_TARGET_S = 60.0
EXPORT_TARGET_S = 30.0
RSS_TARGET_MB = 100.0
P99_TARGET_MS = 100.0


def csv_file(rows: int = ROWS) -> bytes:
    lines = ["email,name,source,note,phone,tags,City,Course of interest"]
    for n in range(rows):
        email = f"im-{n}@bench.example.com"
        if n % 100 == 1 and n > 1_000:  # a repeat of one of the first rows: it wins
            email = f"im-{n % 1_000}@bench.example.com"
        if n and n % 50 == 0:
            email = f"not-an-address-{n}"
        note = '"Asked about evenings, and ""weekends"""' if n % 3 == 0 else ""
        tags = "newsletter;evening" if n % 2 else "newsletter"
        lines.append(
            f"{email},Lead {n},fair,{note},+44 20 7946 {n % 10_000:04d},{tags},"
            f"City {n % 20},Course {n % 7}"
        )
    return ("\r\n".join(lines) + "\r\n").encode()


class Sampler(threading.Thread):
    """The server's RSS every 100 ms, and (with a lead id) GET /leads/{id} latencies."""

    def __init__(self, pid: int, url: str = "", key: str = "", lead_id: str = "") -> None:
        super().__init__(daemon=True)
        self.pid, self.url, self.key, self.lead_id = pid, url, key, lead_id
        self.rss: list[float] = []
        self.latencies_ms: list[float] = []
        self.errors = 0
        self.stop = threading.Event()

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.url or "http://unused", headers=headers) as client:
            next_rss = 0.0
            while not self.stop.is_set():
                now = time.monotonic()
                if now >= next_rss:
                    self.rss.append(rss_mb(self.pid))
                    next_rss = now + 0.1
                if not self.lead_id:
                    time.sleep(0.05)
                    continue
                started = time.perf_counter()
                response = client.get(f"/api/v1/leads/{self.lead_id}")
                self.latencies_ms.append((time.perf_counter() - started) * 1000)
                self.errors += response.status_code != 200
                time.sleep(0.01)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def post_and_wait(
    client: httpx.Client, body: bytes, poll: float
) -> tuple[dict[str, Any], float, float]:
    """POST ``body`` as an import and poll it until it ends: the import as last read, the
    seconds until the POST was answered, and until the import ended."""
    started = time.perf_counter()
    posted = client.post(
        "/api/v1/leads/imports", content=body, headers={"Content-Type": "text/csv"}
    )
    accepted_s = time.perf_counter() - started
    posted.raise_for_status()
    import_id = posted.json()["data"]["id"]
    while True:
        found: dict[str, Any] = client.get(f"/api/v1/leads/imports/{import_id}").json()["data"]
        if found["status"] in ("done", "failed"):
            return found, accepted_s, time.perf_counter() - started
        time.sleep(poll)


def run_import(url: str, key: str, pid: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    body = csv_file()
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        probe = client.post(
            "/api/v1/leads", json={"name": "Probe", "email": "im-probe@bench.example.com"}
        )
        probe.raise_for_status()
        sampler = Sampler(pid, url, key, probe.json()["data"]["lead_id"])
        sampler.start()
        time.sleep(1.0)  # latencies before the import, for comparison
        before = len(sampler.latencies_ms)
        rss_before = rss_mb(pid)
        found, accepted_s, seconds = post_and_wait(client, body, poll=0.25)
        sampler.stop.set()
        sampler.join()
    during = sampler.latencies_ms[before:]
    result = {
        "rows": ROWS,
        "bytes": len(body),
        "status": found["status"],
        "counts": {k: found[k] for k in ("created", "updated", "skipped", "failed")},
        "seconds": round(seconds, 2),
        "accepted_s": round(accepted_s, 3),
        "rows_per_s": round(ROWS / seconds),
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(max(sampler.rss), 1),
        "rss_growth_mb": round(max(sampler.rss) - rss_before, 1),
        "get_lead_during": {
            "requests": len(during),
            "errors": sampler.errors,
            "p50_ms": _quantile(during, 0.5),
            "p99_ms": _quantile(during, 0.99),
            "max_ms": round(max(during), 2) if during else 0.0,
        },
        "get_lead_before_p50_ms": round(statistics.median(sampler.latencies_ms[:before]), 2),
    }
    log(
        f"{IMPORT_ID} import of {ROWS:,} rows: {result['seconds']} s ({result['rows_per_s']:,}"
        f" rows/s), RSS +{result['rss_growth_mb']} MB, GET /leads/{{id}} during it p99"
        f" {result['get_lead_during']['p99_ms']} ms"
    )
    return result


def run_export(url: str, key: str, pid: int) -> dict[str, Any]:
    sampler = Sampler(pid)
    sampler.start()
    rss_before = rss_mb(pid)
    started = time.perf_counter()
    size = lines = 0
    headers = {"Authorization": f"Bearer {key}"}
    with (
        httpx.Client(base_url=url, headers=headers, timeout=120) as client,
        client.stream("GET", "/api/v1/leads/export") as response,
    ):
        response.raise_for_status()
        first_byte_s = time.perf_counter() - started
        for chunk in response.iter_bytes():
            size += len(chunk)
            lines += chunk.count(b"\r\n")
    seconds = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    result = {
        "leads": lines - 1,
        "bytes": size,
        "seconds": round(seconds, 2),
        "first_byte_s": round(first_byte_s, 3),
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(max(sampler.rss), 1),
        "rss_growth_mb": round(max(sampler.rss) - rss_before, 1),
    }
    log(
        f"{EXPORT_ID} export of {lines - 1:,} leads: {result['seconds']} s, first byte"
        f" {result['first_byte_s']} s, RSS +{result['rss_growth_mb']} MB"
    )
    return result


def run_lead_files(selected: set[str], server: Server, key: str) -> dict[str, Any]:
    """IM then EX (the export reads what the import wrote, and the leads made before)."""
    url, pid = server.url, server.pid
    found: dict[str, Any] = {}
    if IMPORT_ID in selected:
        found["import"] = run_import(url, key, pid)
    if EXPORT_ID in selected:
        found["export"] = run_export(url, key, pid)
    return found


def with_lead_files(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with IM and EX's figures and their checks (the issue's targets)."""
    if not found:
        return report
    report["lead_files"] = found
    rows: list[tuple[str, str, float, str, float]] = []
    if (im := found.get("import")) is not None:
        during = im["get_lead_during"]["p99_ms"]
        rows += [
            (IMPORT_ID, "100,000-row CSV import", im["seconds"], " s", IMPORT_TARGET_S),
            (f"{IMPORT_ID} RSS", "RSS growth during it", im["rss_growth_mb"], " MB", RSS_TARGET_MB),
            (f"{IMPORT_ID} p99", "GET /leads/{id} during it", during, " ms", P99_TARGET_MS),
        ]
    if (ex := found.get("export")) is not None:
        rows += [
            (EXPORT_ID, "100,000-lead CSV export", ex["seconds"], " s", EXPORT_TARGET_S),
            (f"{EXPORT_ID} RSS", "RSS growth during it", ex["rss_growth_mb"], " MB", RSS_TARGET_MB),
        ]
    for cid, title, value, unit, target in rows:
        report["checks"].append(
            {
                "id": cid,
                "title": title,
                "value": value,
                "unit": unit,
                "target": f"<= {target:g}{unit}",
                "met": value <= target,
            }
        )
    return report
