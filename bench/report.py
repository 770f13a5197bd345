"""The table printed from a run's report (the dict bench/results/latest.json holds).

python -m bench.report [bench/results/latest.json]   # print a saved run again
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.campaign_results import render_campaigns

# A server at or above this share of its core is the bottleneck of its run.
SATURATED = 90.0
# Busy CPU outside the benchmark's processes, in % of a core, that makes a run suspect.
NOISY = 15.0


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _bound(row: dict[str, Any], server_cpu: int) -> str:
    """What limited the run, as far as CPU use tells."""
    cpu = (row["median"] or {}).get("cpu_percent")
    if not cpu:
        return "-"
    if row["server"] == "postgres":
        return "postgres+pgbench"
    if cpu["server"] >= SATURATED:
        return "server CPU"
    if cpu["load_generator"] >= SATURATED:
        return "LOAD GENERATOR"
    cores = cpu.get("cores") or []
    if server_cpu < len(cores) and cores[server_cpu] >= SATURATED:
        return "server's core, shared"  # with Postgres or another process
    return "waiting"  # on the provider, the database or a concurrency limit


def _header(report: dict[str, Any]) -> list[str]:
    meta = report["meta"]
    settings, machine, versions = meta["settings"], meta["machine"], meta["versions"]
    git = meta["git"]
    modules = {
        name
        for facts in meta["servers"].values()
        for name, loaded in (facts.get("modules") or {}).items()
        if loaded
    }
    loop = ", ".join(sorted(modules, reverse=True)) or "?"
    wrk = machine["wrk"].split(" Copyright")[0].split(" [")[0]
    return [
        f"leadmail benchmark, {meta['started_at']}, commit {git['commit']}"
        + (
            f" + uncommitted changes to {', '.join(git.get('changed', [])[:4])}"
            if git["dirty"]
            else ""
        ),
        f"{machine['cpus']} x {machine['cpu_model']}, PostgreSQL {machine['postgres']}, {wrk}",
        f"Python {versions.get('python')}, Litestar {versions.get('litestar')},"
        f" uvicorn {versions.get('uvicorn')} ({loop}), Piccolo {versions.get('piccolo')},"
        f" FastAPI {versions.get('fastapi', '-')}, SQLAlchemy {versions.get('sqlalchemy', '-')}",
        f"each server: one process on cpu {settings['server_cpu']}; wrk"
        f" -t{settings['wrk_threads']} -c{settings['connections']}"
        + (
            " and Postgres"
            if settings.get("postgres_cpu") is not None
            and settings["postgres_cpu"] == settings["load_cpu"]
            else ""
        )
        + f" on cpu {settings['load_cpu']};"
        f" {settings['duration_s']} s runs after {settings['warmup_s']} s warm-up,"
        f" median of {settings['repeats']}; provider stand-in"
        f" {settings['provider_latency_ms']:g} ms"
        + (" (QUICK: figures are rough)" if settings["quick"] else ""),
    ]


def _table(report: dict[str, Any]) -> list[str]:
    head = (
        f"{'id':>3}  {'scenario':<42} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}"
        f" {'us/req':>7} {'pg us':>6}"
        f" {'RSS MB':>7} {'server':>7} {'load':>5} {'pg':>5} {'irq':>5} {'other':>5}  bound"
    )
    lines = [head, "-" * len(head)]
    server_cpu = report["meta"]["settings"]["server_cpu"]
    for row in report["scenarios"]:
        m = row["median"]
        if m is None:
            lines.append(f"{row['id']:>3}  {row['title']:<42} FAILED: {_first_line(row['error'])}")
            continue
        cpu = m["cpu_percent"] or {}
        lines.append(
            f"{row['id']:>3}  {row['title']:<42} {_rate(m['rps']):>8} {m['p50_ms']:>8.1f}"
            f" {m['p99_ms']:>8.1f} {m['errors']:>7,}"
            f" {_num(m.get('server_cpu_us_per_request'), ',.0f'):>7}"
            f" {_num(m.get('postgres_cpu_us_per_request'), ',.0f'):>6}"
            f" {_num(m['server_rss_mb'], '.0f'):>7}"
            f" {_pct(cpu.get('server'), row['server'] != 'postgres'):>7}"
            f" {_pct(cpu.get('load_generator')):>5} {_pct(cpu.get('postgres')):>5}"
            f" {_pct(cpu.get('interrupts')):>5} {_pct(cpu.get('other')):>5}"
            f"  {_bound(row, server_cpu)}"
        )
    lines.append(
        "errors: non-2xx answers and socket errors, summed over the measured runs;"
        " us/req, pg us: the server's and Postgres' CPU time per request; RSS: the server's,"
        " after its last run"
    )
    lines.append(
        "server, load, pg, irq: % of one core used by the server, the load generator, the"
        " benchmark's Postgres processes, interrupts (loopback networking);"
    )
    lines.append("other: busy CPU none of them used (other processes on the machine: noise)")
    return lines


def _rate(rps: float) -> str:
    return f"{rps:,.0f}" if rps >= 100 else f"{rps:.1f}"


def _pct(value: float | None, show: bool = True) -> str:
    return "-" if value is None or not show else f"{value:.0f}%"


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:80] if text else ""


def _batch(report: dict[str, Any]) -> list[str]:
    batch = report["email_batch"]
    if not batch:
        return []
    runs = ", ".join(f"{s:.2f}" for s in batch["runs_s"])
    return [
        f"{batch['emails']:,} template emails ({batch['requests']} concurrent requests x"
        f" {batch['recipients_per_request']} recipients, {batch['provider_latency_ms']:g} ms"
        f" stand-in): median {batch['median_s']:.2f} s (runs {runs}; floor"
        f" {batch['floor_s']:.2f} s = 1,000 / 50 slots x latency); sent {batch['sent']},"
        f" failed requests {batch['failed_requests']}"
    ]


def _checks(report: dict[str, Any]) -> list[str]:
    lines = [f"{'check':<14} {'what':<42} {'value':>10}  {'target':<11} verdict", "-" * 90]
    for check in report["checks"]:
        value = check["value"]
        unit = check["unit"]
        shown = "-" if value is None else f"{value:.2f}{unit.strip() and unit}"
        verdict = {True: "met", False: "MISSED", None: ""}[check["met"]]
        if check["target"] is None:
            verdict = "(context)"
        lines.append(
            f"{check['id']:<14} {check['title']:<42} {shown:>10}  {check['target'] or '':<11}"
            f" {verdict}"
        )
    return lines


def _notes(report: dict[str, Any]) -> list[str]:
    meta = report["meta"]
    notes = list(meta.get("notes") or [])
    leadmail = meta["servers"].get("leadmail")
    if leadmail and leadmail.get("error_log_lines"):
        notes.append(f"leadmail logged {leadmail['error_log_lines']} error line(s)")
    for name, facts in meta["servers"].items():
        missing = [m for m, loaded in (facts.get("modules") or {}).items() if not loaded]
        if missing:
            notes.append(f"{name} runs without {', '.join(missing)}")
    for row in report["scenarios"]:
        if row.get("error") and row["median"] is not None:
            notes.append(f"scenario {row['id']}: {_first_line(row['error'])}")
        cpu = (row["median"] or {}).get("cpu_percent") or {}
        if row.get("messages_per_request") and row["median"]:
            emails = row["median"]["rps"] * row["messages_per_request"]
            notes.append(
                f"scenario {row['id']}: {emails:,.0f} emails/s, {row['messages_per_request']}"
                f" per request, {row['connections']} connections"
            )
        if cpu.get("standin", 0.0) >= 1.0:
            notes.append(
                f"scenario {row['id']}: the provider stand-in used {cpu['standin']:.0f}% of a"
                " core (on the load generator's)"
            )
        other = cpu.get("other") or 0.0
        if other >= NOISY:
            notes.append(
                f"scenario {row['id']}: {other:.0f}% of a core went to processes outside"
                " the benchmark: its figures are disturbed"
            )
    return ["notes:", *(f"  - {n}" for n in notes)] if notes else []


def _profiles(report: dict[str, Any]) -> list[str]:
    lines = []
    for row in report["scenarios"]:
        profile = row.get("profile")
        if not profile or not profile.get("samples"):
            continue
        lines.append(
            f"profile of {row['id']} {row['title']} ({profile['samples']} samples,"
            f" {profile['rps_while_profiled']:,.0f} req/s while sampled; {profile['file']}):"
        )
        lines.extend(f"  {share:5.1f}%  {name}" for name, share in profile["categories"])
    return lines


def render(report: dict[str, Any]) -> str:
    parts = [
        _header(report),
        _table(report),
        _batch(report),
        render_campaigns(report),
        _checks(report),
        _profiles(report),
        _notes(report),
    ]
    return "\n\n".join("\n".join(p) for p in parts if p)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).parent / "results" / "latest.json"
    print(render(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
