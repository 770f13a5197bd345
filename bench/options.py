"""The driver's command line (``python -m bench.run --help``), and the checks that the
machine can run what it asks for."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import ROOT
from bench.scenarios import (
    BATCH_ID,
    BULK_MIN_DURATION_S,
    IDS,
    INSTR_ID,
    PGBENCH_ID,
    SCENARIOS,
    Scenario,
)

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"  # the campaigns' shared rate limiter
RESULTS = ROOT / "bench" / "results" / "latest.json"


@dataclass(frozen=True)
class Options:
    duration: int
    warmup: int
    repeats: int
    connections: int
    bulk_connections: int
    threads: int
    wrk_timeout: int
    provider_latency: float
    server_cpu: int
    load_cpu: int
    postgres_cpu: int | None
    postgres_url: str
    redis_url: str
    only: frozenset[str]
    profile: frozenset[str]
    output: Path
    quick: bool

    def selected(self, scenario_id: str) -> bool:
        return not self.only or scenario_id in self.only

    def connections_for(self, scenario: Scenario) -> int:
        return self.bulk_connections if scenario.bulk else self.connections

    def settings(self, postgres_pinned: bool) -> dict[str, Any]:
        """The run's settings, as the JSON's meta.settings holds them."""
        return {
            "duration_s": self.duration,
            "warmup_s": self.warmup,
            "repeats": self.repeats,
            "connections": self.connections,
            "bulk_connections": self.bulk_connections,
            "bulk_min_duration_s": BULK_MIN_DURATION_S,
            "wrk_threads": self.threads,
            "wrk_timeout_s": self.wrk_timeout,
            "provider_latency_ms": round(self.provider_latency * 1000, 1),
            "server_cpu": self.server_cpu,
            "load_cpu": self.load_cpu,
            "postgres_cpu": self.postgres_cpu if postgres_pinned else None,
            "quick": self.quick,
        }


def parse_args(argv: list[str] | None, description: str) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=description)
    parser.add_argument("--quick", action="store_true", help="2 s runs, 1 s warm-up, 1 repeat")
    parser.add_argument("--duration", type=int, help="seconds per measured run (10)")
    parser.add_argument("--warmup", type=int, help="seconds of warm-up before each run (3)")
    parser.add_argument("--repeats", type=int, help="measured runs per scenario (3)")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64)")
    parser.add_argument(
        "--bulk-connections",
        type=int,
        default=4,
        help="wrk connections for the 50-recipient template scenario (4: 200 messages in"
        " flight, four times the server's delivery slots)",
    )
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (1)")
    parser.add_argument("--wrk-timeout", type=int, default=30, help="wrk request timeout, s")
    parser.add_argument(
        "--provider-latency", type=float, default=0.05, help="stand-in latency, s (0.05)"
    )
    parser.add_argument("--server-cpu", type=int, default=0, help="core for the server (0)")
    parser.add_argument("--load-cpu", type=int, default=1, help="core for wrk (1)")
    parser.add_argument(
        "--postgres-cpu",
        default="load",
        help="core to pin the local Postgres' processes to for the run, 'load' for wrk's"
        " (default: the server keeps its core to itself), or 'none' to leave them floating",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", DEFAULT_POSTGRES_URL),
        help="a server where the run may create a database (BENCH_POSTGRES_URL)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS_URL),
        help="the Redis K3 and K4's workers share their rate limiter in (BENCH_REDIS_URL)",
    )
    parser.add_argument(
        "--only",
        default="",
        help=f"comma list of scenario ids ({', '.join(s.id for s in SCENARIOS)},"
        f" {PGBENCH_ID}, {BATCH_ID} for the 1,000 emails, {INSTR_ID} for instructions per"
        " request, T, IM, EX, K1-K5 for the campaigns, K1a and K2a on an own template);"
        " default all",
    )
    parser.add_argument(
        "--profile",
        default="",
        help="comma list of scenario ids to profile with py-spy in an extra, unmeasured run;"
        " the samples go to profile-<id>.txt beside the JSON",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the JSON goes")
    args = parser.parse_args(argv)
    duration = args.duration or (2 if args.quick else 10)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    repeats = args.repeats or (1 if args.quick else 3)
    if duration < 1 or repeats < 1 or warmup < 0 or args.connections < args.threads:
        parser.error("--duration, --repeats >= 1; --warmup >= 0; --connections >= --threads")
    if args.postgres_cpu not in ("load", "none") and not args.postgres_cpu.isdigit():
        parser.error("--postgres-cpu takes a core number, 'load' or 'none'")
    postgres_cpu = {"load": args.load_cpu, "none": None}.get(args.postgres_cpu)
    if postgres_cpu is None and args.postgres_cpu.isdigit():
        postgres_cpu = int(args.postgres_cpu)
    only = frozenset(s.strip() for s in args.only.split(",") if s.strip())
    profile = frozenset(s.strip() for s in args.profile.split(",") if s.strip())
    if not only | profile <= IDS:
        parser.error(f"unknown scenario id(s): {', '.join(sorted((only | profile) - IDS))}")
    return Options(
        duration=duration,
        warmup=warmup,
        repeats=repeats,
        connections=args.connections,
        bulk_connections=args.bulk_connections,
        threads=args.threads,
        wrk_timeout=args.wrk_timeout,
        provider_latency=args.provider_latency,
        server_cpu=args.server_cpu,
        load_cpu=args.load_cpu,
        postgres_cpu=postgres_cpu,
        postgres_url=args.postgres_url,
        redis_url=args.redis_url,
        only=only,
        profile=profile,
        output=args.output,
        quick=args.quick,
    )


def preflight(opts: Options) -> list[str]:
    """Stops on what makes the run impossible; returns warnings for what weakens it."""
    missing = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"bench: {' and '.join(missing)} not found (make bench installs wrk)")
    cpus = os.sched_getaffinity(0)
    if not {opts.server_cpu, opts.load_cpu} <= cpus or opts.server_cpu == opts.load_cpu:
        sys.exit(
            f"bench: needs two distinct cores for the server and wrk; this process may use"
            f" {sorted(cpus)} (see --server-cpu, --load-cpu)"
        )
    notes = []
    if len(cpus) > 2:
        notes.append(f"{len(cpus)} cores: other processes float over all of them")
    if shutil.which("pgbench") is None:
        notes.append("pgbench not found: scenario 9 skipped (Debian: postgresql-15 ships it)")
    return notes
