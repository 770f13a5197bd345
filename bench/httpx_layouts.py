"""Ceiling C under each way of setting up httpx, measured in one sitting.

    python -m bench.httpx_layouts [--layouts 1x100:rr,8x8:rr,64x1:free] [--repeats 3]

Each layout is ``CLIENTSxCONNECTIONS:PICK[:CALL[:EXPIRY]]`` (bench/send_layouts.py says
what they mean; CALL is ``client`` and EXPIRY, the keep-alive expiry, httpx's 5 s unless
given). Every layout runs as its own ceiling C server,
started the way bench/run.py starts the ceilings (one process pinned to the server's
core, uvicorn with uvloop and httptools), against the same fresh database and the same
provider stand-in; wrk sends scenario C's request (bench/wrk/email_send.lua, 64
connections by default) to each in interleaved rounds, and the medians are printed and
written to bench/results/httpx-layouts.json.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.network import free_port

from bench import facts
from bench.common import ROOT, log
from bench.database import fresh_database, prepare
from bench.loadgen import LoadResult
from bench.measure import Bench
from bench.options import parse_args as parse_bench_args
from bench.pinning import PinnedPostgres
from bench.probes import probe
from bench.scenarios import SCENARIOS
from bench.send_layouts import Layout
from bench.servers import build_servers, child_env, start_servers, start_standin

DEFAULT_LAYOUTS = (
    "1x100:rr,1x64:rr,2x32:rr,4x16:rr,8x8:rr,16x4:rr,64x1:rr,"
    "8x8:free,16x4:free,64x1:free,64x1:free:transport"
)
OUTPUT = ROOT / "bench" / "results" / "httpx-layouts.json"


def summary(runs: list[LoadResult]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return round(float(statistics.median(values)), 1)

    shares = [r.shares for r in runs if r.shares is not None]
    server_us = [10_000 * s.server / r.rps for r, s in zip(runs, shares, strict=True)]
    postgres_us = [10_000 * s.postgres / r.rps for r, s in zip(runs, shares, strict=True)]
    return {
        "rps": med([r.rps for r in runs]),
        "rps_runs": [round(r.rps, 1) for r in runs],
        "server_cpu_us_per_request": med(server_us),
        "server_cpu_us_runs": [round(us) for us in server_us],
        "postgres_cpu_us_per_request": med(postgres_us),
        "p50_ms": med([r.p50_ms for r in runs]),
        "p99_ms": med([r.p99_ms for r in runs]),
        "errors": sum(r.errors for r in runs),
        "server_percent": med([s.server for s in shares]),
        "other_percent": med([s.other for s in shares]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.httpx_layouts", description=__doc__)
    parser.add_argument("--layouts", default=DEFAULT_LAYOUTS)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args, rest = parser.parse_known_args(argv)
    layouts = [Layout.parse(t) for t in args.layouts.split(",") if t]
    opts = parse_bench_args(rest, description="")
    os.sched_setaffinity(0, {opts.load_cpu})
    base = next(s for s in SCENARIOS if s.server == "ceiling_c")
    env = child_env()
    runs: dict[str, list[LoadResult]] = {layout.name: [] for layout in layouts}
    started_at = datetime.now(UTC)
    with (
        PinnedPostgres(opts.postgres_cpu) as pinned,
        tempfile.TemporaryDirectory(prefix="leadmail-layouts-") as tmp_name,
        fresh_database(opts.postgres_url) as db_url,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmp_name)
        key, account_id, _ = prepare(db_url, env)
        standin_log = stack.enter_context((tmp / "standin.log").open("w"))
        standin = start_standin(opts.load_cpu, opts.provider_latency, env, standin_log)
        stack.callback(standin.stop)
        template = build_servers(opts.server_cpu, env, db_url, account_id, standin.url, tmp)
        servers = {}
        base_server = template["ceiling_c"]
        for layout in layouts:
            port = free_port()
            argv = list(base_server.argv)
            argv[argv.index("--port") + 1] = str(port)
            servers[layout.name] = dataclasses.replace(
                base_server,
                name=layout.name,
                argv=argv,
                env={**base_server.env, **layout.env()},
                log_path=tmp / f"{layout.name.replace(':', '_')}.log",
                port=port,
            )
        start_servers(servers, set(servers), stack)
        bench = Bench(opts, key, account_id, db_url, standin, servers, tmp)
        scenarios = [dataclasses.replace(base, server=name, title=name) for name in servers]
        for scenario in scenarios:
            problem = probe(scenario, servers[scenario.server], key, "")
            if problem:
                sys.exit(f"{scenario.server}: {problem}")
        for round_no in range(1, opts.repeats + 1):
            for scenario in scenarios:
                result = bench.measure(scenario)
                runs[scenario.server].append(result)
                shares = result.shares
                assert shares is not None
                log(
                    f"[{round_no}/{opts.repeats}] {scenario.server}: {result.rps:,.0f}/s,"
                    f" {10_000 * shares.server / result.rps:,.0f} us/req server,"
                    f" p99 {result.p99_ms:.0f} ms, server {shares.server:.0f}%,"
                    f" pg {shares.postgres:.0f}%, other {shares.other:.0f}%"
                )
        postgres_pinned = pinned.pinned
    measured = {name: summary(r) for name, r in runs.items() if r}
    report = {
        "started_at": started_at.isoformat(timespec="seconds"),
        "git": facts.git_state(),
        "versions": facts.package_versions(),
        "settings": opts.settings(postgres_pinned=postgres_pinned),
        "layouts": measured,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'layout':<26} {'req/s':>7} {'us/req':>7} {'pg us':>6} {'p50':>6} {'p99':>6}  runs")
    for name, s in measured.items():
        print(
            f"{name:<26} {s['rps']:>7,.0f} {s['server_cpu_us_per_request']:>7,.0f}"
            f" {s['postgres_cpu_us_per_request']:>6,.0f} {s['p50_ms']:>6.1f} {s['p99_ms']:>6.1f}"
            f"  {', '.join(f'{x:,.0f}' for x in s['rps_runs'])} req/s;"
            f" {', '.join(str(x) for x in s['server_cpu_us_runs'])} us"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
