"""The measurements, each one after a warm-up and once the server has gone idle: a
scenario under wrk, pgbench, the 1,000 template emails, instructions per request."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import instructions
from bench.common import BIN, ROOT, log
from bench.cpu import CpuWindow, rss_mb, wait_idle
from bench.database import database_name
from bench.loadgen import LoadError, LoadResult, parse_pgbench, parse_wrk, run_load
from bench.options import Options
from bench.scenarios import (
    BATCH_REQUESTS,
    BULK_MIN_DURATION_S,
    INSTR_ID,
    PGBENCH_ARGS,
    PGBENCH_SCRIPT,
    Scenario,
    template_body,
)
from bench.servers import Server, Standin

WRK_DIR = ROOT / "bench" / "wrk"


@dataclass
class Bench:
    """What every measurement needs: the options, the key, the processes, the database."""

    opts: Options
    key: str
    account_id: str
    db_url: str
    standin: Standin
    servers: dict[str, Server]
    tmp: Path
    lead_ids_file: Path | None = None

    @property
    def db_name(self) -> str:
        return database_name(self.db_url)

    def wrk_argv(self, scenario: Scenario, url: str, seconds: int, args: list[str]) -> list[str]:
        opts = self.opts
        connections = opts.connections_for(scenario)
        return [
            "taskset", "-c", str(opts.load_cpu),
            "wrk", f"-t{min(opts.threads, connections)}", f"-c{connections}",
            f"-d{seconds}s", "--latency", "--timeout", f"{opts.wrk_timeout}s",
            "-s", str(WRK_DIR / scenario.script), url, "--", *args,
        ]  # fmt: skip

    def measure(self, scenario: Scenario, profile_to: Path | None = None) -> LoadResult:
        """Warm up, let the server go idle, then one measured wrk run; with ``profile_to``,
        py-spy samples the server during the run (which slows it: not a measurement)."""
        server = self.servers[scenario.server]
        url = server.url + ("" if "{" in scenario.path else scenario.path)
        key = self.key if server.name in ("leadmail", "peer") else "-"
        extra = str(self.lead_ids_file) if "{id}" in scenario.path else ""
        duration = max(self.opts.duration, BULK_MIN_DURATION_S if scenario.bulk else 0)
        timeout = duration + self.opts.wrk_timeout + 60

        wait_idle(server.pid)
        if self.opts.warmup:
            args = [key, "w" + secrets.token_hex(4), extra]
            run_load(self.wrk_argv(scenario, url, self.opts.warmup, args), timeout=timeout)
            # What the warm-up left in flight (template sends) must not spill into the run.
            wait_idle(server.pid)
        argv = self.wrk_argv(scenario, url, duration, [key, "m" + secrets.token_hex(4), extra])
        profiler = None
        if profile_to is not None:
            profiler = subprocess.Popen(
                [str(BIN / "py-spy"), "record", "--pid", str(server.pid), "--format", "raw",
                 "--output", str(profile_to), "--duration", str(duration), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        try:
            with CpuWindow(server.pid, self.standin.pid, self.db_name) as window:
                output = run_load(argv, timeout=timeout)
        except BaseException:
            if profiler is not None:
                profiler.kill()
                profiler.wait()
            raise
        if profiler is not None:
            _, errors = profiler.communicate(timeout=60)
            if profiler.returncode != 0:
                raise LoadError(f"py-spy failed: {errors[-1000:]}")
        result = parse_wrk(output)
        result.shares = window.shares
        result.rss_mb = rss_mb(server.pid)
        return result

    def pgbench(self) -> LoadResult:
        # Postgres' own limit: pgbench and Postgres may use every core.
        cpus = ",".join(str(c) for c in range(os.cpu_count() or 1))

        def argv(seconds: int, log_prefix: Path | None) -> list[str]:
            logging = ["-l", f"--log-prefix={log_prefix}"] if log_prefix else []
            return [
                "taskset", "-c", cpus,
                "pgbench", *PGBENCH_ARGS, "-T", str(seconds),
                "-D", f"account={self.account_id}", "-f", str(ROOT / PGBENCH_SCRIPT), *logging,
                self.db_url,
            ]  # fmt: skip

        timeout = self.opts.duration + 120
        if self.opts.warmup:
            run_load(argv(self.opts.warmup, None), timeout=timeout)
        logs = self.tmp / f"pgbench-{secrets.token_hex(4)}"
        logs.mkdir()
        with CpuWindow(None, None, self.db_name) as window:
            output = run_load(argv(self.opts.duration, logs / "tx"), timeout=timeout)
        result = parse_pgbench(output, sorted(logs.iterdir()))
        shutil.rmtree(logs)
        result.shares = window.shares
        return result

    def email_batch(self) -> dict[str, Any]:
        """20 concurrent template requests of 50 recipients: 1,000 emails. Seconds from
        the first request sent to the last answer, and what was answered."""
        server = self.servers["leadmail"]

        async def batch() -> tuple[float, list[httpx.Response]]:
            limits = httpx.Limits(max_connections=BATCH_REQUESTS)
            headers = {"Authorization": f"Bearer {self.key}"}
            token = secrets.token_hex(4)
            bodies = [template_body(f"batch-{token}-{i}") for i in range(BATCH_REQUESTS)]
            async with httpx.AsyncClient(
                base_url=server.url, headers=headers, limits=limits, timeout=60
            ) as client:
                started = time.perf_counter()
                responses = await asyncio.gather(
                    *(client.post("/api/v1/email/template", json=body) for body in bodies)
                )
                return time.perf_counter() - started, responses

        wait_idle(server.pid)
        with CpuWindow(server.pid, self.standin.pid, self.db_name) as window:
            seconds, responses = asyncio.run(batch())
        sent = 0
        for response in responses:
            if response.status_code == 200:
                messages = response.json()["data"]["messages"]
                sent += sum(1 for m in messages if m["status"] == "sent")
        return {
            "seconds": seconds,
            "sent": sent,
            "failed_requests": sum(1 for r in responses if r.status_code != 200),
            "server_cpu_percent": round(window.shares.server, 1),
        }


def count_instructions(servers: dict[str, Server], key: str, tmp: Path, cpu: int) -> dict[str, int]:
    """Instructions per POST /leads of ceiling B and of leadmail, and per send of ceiling
    C and of leadmail (bench/instructions.py), with the settings their servers run with."""
    counted = {}
    for name in instructions.APPS:
        server = "leadmail" if name.startswith("leadmail") else name
        env = {**servers[server].env, "BENCH_API_KEY": key}
        log(f"{INSTR_ID} counting instructions per {instructions.APPS[name][1]} of {name}")
        counted[name] = instructions.count(name, env, tmp / f"callgrind-{name}.log", cpu)
        log(f"{INSTR_ID} {name}: {counted[name]:,} instructions per request")
    return counted


def progress(round_no: int, repeats: int, sid: str, title: str, result: LoadResult) -> str:
    shares = result.shares
    cpu = (
        f" | cpu: server {shares.server:.0f}%, load {shares.load:.0f}%, pg {shares.postgres:.0f}%"
        if shares
        else ""
    )
    return (
        f"[{round_no}/{repeats}] {sid:>2} {title}: {result.rps:,.0f}/s,"
        f" p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, errors {result.errors}{cpu}"
    )
