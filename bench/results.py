"""The report a run leaves (the dict bench/results/latest.json holds): each scenario's
runs and their median, the 1,000 emails, instructions per request, and the checks."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import instructions
from bench.cpu import CpuShares
from bench.loadgen import LoadResult
from bench.options import Options
from bench.scenarios import (
    BATCH_REQUESTS,
    PGBENCH_ARGS,
    PGBENCH_ID,
    PGBENCH_SCRIPT,
    PGBENCH_TITLE,
    RECIPIENTS,
    Scenario,
)
from leadmail.config import Settings

EMAIL_CONCURRENCY = Settings().email_concurrency  # the default, for the batch's floor


@dataclass
class Collected:
    """What the run measured, filled in as it goes."""

    runs: dict[str, list[LoadResult]]  # by scenario id
    failures: dict[str, str] = field(default_factory=dict)  # why a scenario has no figures
    pg_runs: list[LoadResult] = field(default_factory=list)
    counted: dict[str, int] = field(default_factory=dict)  # instructions, by server
    batches: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, Any] = field(default_factory=dict)
    segments: dict[str, Any] | None = None  # scenario T (bench/segments.py)


def assemble(
    opts: Options, scenarios: list[Scenario], got: Collected, meta: dict[str, Any]
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for s in scenarios:
        runs = got.runs[s.id]
        rows.append(
            {
                "id": s.id,
                "title": s.title,
                "server": s.server,
                "request": f"{s.method} {s.path}",
                "connections": opts.connections_for(s),
                "messages_per_request": RECIPIENTS if s.bulk else None,
                "median": median_result(runs) if runs else None,
                "runs": [r.as_dict() for r in runs],
                "error": got.failures.get(s.id),
                "profile": got.profiles.get(s.id),
            }
        )
    if opts.selected(PGBENCH_ID):
        rows.append(
            {
                "id": PGBENCH_ID,
                "title": PGBENCH_TITLE,
                "server": "postgres",
                "request": f"pgbench {' '.join(PGBENCH_ARGS)} -f {PGBENCH_SCRIPT}",
                "median": median_result(got.pg_runs) if got.pg_runs else None,
                "runs": [r.as_dict() for r in got.pg_runs],
                "error": got.failures.get(PGBENCH_ID),
            }
        )
    batch = None
    if got.batches:
        seconds = [b["seconds"] for b in got.batches]
        batch = {
            "emails": BATCH_REQUESTS * RECIPIENTS,
            "requests": BATCH_REQUESTS,
            "recipients_per_request": RECIPIENTS,
            "provider_latency_ms": meta["settings"]["provider_latency_ms"],
            # Each message holds one of LEADMAIL_EMAIL_CONCURRENCY slots for one latency.
            "floor_s": round(
                BATCH_REQUESTS * RECIPIENTS / EMAIL_CONCURRENCY * opts.provider_latency, 3
            ),
            "median_s": round(statistics.median(seconds), 3),
            "runs_s": [round(s, 3) for s in seconds],
            "sent": [b["sent"] for b in got.batches],
            "failed_requests": sum(b["failed_requests"] for b in got.batches),
        }
    instr = None
    if got.counted:
        instr = {
            "requests_counted": instructions.REQUESTS,
            "in_flight": instructions.CONCURRENCY,
            "per_request": got.counted,
            "ratio_3_2": round(got.counted["ceiling_b"] / got.counted["leadmail"], 3),
            "ratio_6_C": round(got.counted["leadmail_send"] / got.counted["ceiling_c"], 3),
        }
    report = {"meta": meta, "scenarios": rows, "email_batch": batch, "instructions": instr}
    report["segments"] = got.segments  # scenario T
    report["checks"] = checks(report)
    return report


def median_result(runs: list[LoadResult]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return float(statistics.median(values))

    shares = [r.shares for r in runs if r.shares is not None]
    cpu = None
    if shares:
        cores = tuple(med([s.cores[i] for s in shares]) for i in range(len(shares[0].cores)))
        cpu = CpuShares(
            server=med([s.server for s in shares]),
            load=med([s.load for s in shares]),
            standin=med([s.standin for s in shares]),
            postgres=med([s.postgres for s in shares]),
            interrupts=med([s.interrupts for s in shares]),
            cores=cores,
        ).as_dict()
    rss = [r.rss_mb for r in runs if r.rss_mb is not None]
    # Server CPU per request: comparable even where the server did not saturate its core.
    per_request = [
        10_000 * r.shares.server / r.rps for r in runs if r.shares and r.shares.server and r.rps
    ]
    # The same for the run's Postgres processes: the statements a request costs the database.
    pg_per_request = [10_000 * r.shares.postgres / r.rps for r in runs if r.shares and r.rps]
    return {
        "rps": round(med([r.rps for r in runs]), 2),
        "server_cpu_us_per_request": round(med(per_request)) if per_request else None,
        "postgres_cpu_us_per_request": round(med(pg_per_request)) if pg_per_request else None,
        "p50_ms": round(med([r.p50_ms for r in runs]), 2),
        "p99_ms": round(med([r.p99_ms for r in runs]), 2),
        "errors": sum(r.errors for r in runs),  # all runs: one error is worth seeing
        "requests": sum(r.requests for r in runs),
        "server_rss_mb": round(rss[-1], 1) if rss else None,  # after the last run
        "cpu_percent": cpu,
    }


def checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's ratios and targets. ``met`` is None where there is no target, or no
    figure to judge."""
    medians = {row["id"]: row["median"] for row in report["scenarios"] if row["median"]}

    def rps(sid: str) -> float | None:
        return medians[sid]["rps"] if sid in medians else None

    def ratio(a: str, b: str) -> float | None:
        x, y = rps(a), rps(b)
        return round(x / y, 3) if x is not None and y else None

    def judged(value: float | None, target: float | None, higher: bool) -> bool | None:
        if value is None or target is None:
            return None
        return value >= target if higher else value <= target

    out: list[dict[str, Any]] = []

    def add(
        cid: str, title: str, value: float | None, unit: str, target: float | None, higher: bool
    ) -> None:
        sign = ">=" if higher else "<="
        out.append(
            {
                "id": cid,
                "title": title,
                "value": value,
                "unit": unit,
                "target": None if target is None else f"{sign} {target:g}{unit}",
                "met": judged(value, target, higher),
            }
        )

    add("(3)/(2)", "POST /leads vs the bare insert", ratio("3", "2"), "x", 0.75, True)

    def cpu_ratio(a: str, b: str) -> float | None:
        x, y = (medians.get(i, {}).get("server_cpu_us_per_request") for i in (a, b))
        return round(y / x, 3) if x and y else None

    # The same, had each server its core to itself (Postgres shares it in (2)).
    add("(3)/(2) CPU", "the same, by server CPU per request", cpu_ratio("3", "2"), "x", None, True)
    counted = report.get("instructions") or {}
    what = "the same, by instructions per request (callgrind)"
    add("(3)/(2) instr", what, counted.get("ratio_3_2"), "x", None, True)
    add("(3)/(8)", "POST /leads vs the FastAPI peer", ratio("3", "8"), "x", 1.5, True)
    add("(2)/(9)", "the bare insert vs pgbench", ratio("2", "9"), "x", None, True)
    add("(6)/(1)", "email send vs the bare JSON echo", ratio("6", "1"), "x", None, True)
    # Issue 16: a send against ceiling C (the bare INSERT, httpx POST, UPDATE).
    add("(6)/(C)", "email send vs ceiling C", ratio("6", "C"), "x", 0.85, True)

    def per_request(sid: str, key: str) -> float | None:
        value = medians.get(sid, {}).get(key)
        return float(value) if value else None

    def cost_ratio(a: str, b: str, key: str) -> float | None:
        x, y = per_request(a, key), per_request(b, key)
        return round(x / y, 3) if x is not None and y is not None else None

    add(
        "(6)/(C) CPU",
        "server CPU per send vs ceiling C's",
        cost_ratio("6", "C", "server_cpu_us_per_request"),
        "x",
        1.15,
        False,
    )
    # The same without the machine's noise: context beside the timed figure.
    add("(6)/(C) instr", "the same, by instructions (callgrind)", counted.get("ratio_6_C"),
        "x", None, False)  # fmt: skip
    add(
        "(6)/(3) pg",
        "Postgres CPU per send vs per lead insert",
        cost_ratio("6", "3", "postgres_cpu_us_per_request"),
        "x",
        3.0,
        False,
    )
    latency_ms = report["meta"]["settings"]["provider_latency_ms"]
    p99_send = medians["6"]["p99_ms"] if "6" in medians else None
    add("p99 (6)", "p99 of a send", p99_send, " ms", 3 * latency_ms, False)
    bulk = next((r for r in report["scenarios"] if r["id"] == "7"), None)
    messages_ratio = None
    if bulk and bulk["median"] and rps("C"):
        messages = bulk["median"]["rps"] * (bulk["messages_per_request"] or 1)
        messages_ratio = round(messages / rps("C"), 3)
    add("(7)/(C)", "template send messages/s vs ceiling C", messages_ratio, "x", 0.85, True)
    # Issue 26: the same send on the account's own copy of the template, against (7).
    add("(7a)/(7)", "template send on an own template vs a predefined one",
        ratio("7a", "7"), "x", 0.95, True)  # fmt: skip
    add("(5)/(1g)", "template list vs the bare JSON GET", ratio("5", "1g"), "x", 0.8, True)
    p99 = medians["3"]["p99_ms"] if "3" in medians else None
    connections = report["meta"]["settings"]["connections"]
    add(f"p99 (3) @{connections}", "p99 of POST /leads", p99, " ms", 100.0, False)
    batch = report["email_batch"]
    seconds = batch["median_s"] if batch else None
    add("1,000 emails", "1,000 template emails via the stand-in", seconds, " s", 3.0, False)
    ours = report["meta"]["servers"].get("leadmail", {})
    add("RSS", "leadmail's RSS after the run", ours.get("rss_mb_after"), " MB", 150.0, False)
    return out


def write_json(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(report, indent=2) + "\n")
    partial.replace(path)
