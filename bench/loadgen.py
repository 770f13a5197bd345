"""The load generators, wrk and pgbench: running one to its end, and reading what it
printed into a LoadResult.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.cpu import CpuShares


@dataclass
class LoadResult:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p90_ms: float | None
    p99_ms: float
    max_ms: float
    non_2xx: int
    socket_errors: dict[str, int] = field(default_factory=dict)
    shares: CpuShares | None = None
    rss_mb: float | None = None

    @property
    def errors(self) -> int:
        return self.non_2xx + sum(self.socket_errors.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "rps": round(self.rps, 1),
            "p50_ms": round(self.p50_ms, 2),
            "p90_ms": None if self.p90_ms is None else round(self.p90_ms, 2),
            "p99_ms": round(self.p99_ms, 2),
            "max_ms": round(self.max_ms, 2),
            "non_2xx": self.non_2xx,
            "socket_errors": self.socket_errors,
            "errors": self.errors,
            "cpu_percent": None if self.shares is None else self.shares.as_dict(),
            "server_rss_mb": None if self.rss_mb is None else round(self.rss_mb, 1),
        }


class LoadError(RuntimeError):
    """The load generator failed or printed something this module cannot read."""


def parse_wrk(output: str) -> LoadResult:
    """wrk's report, read from the ``BENCH_JSON`` line bench/wrk/common.lua prints (exact
    percentiles and error counts); the text report is the fallback."""
    for line in output.splitlines():
        if line.startswith("BENCH_JSON "):
            data = json.loads(line.removeprefix("BENCH_JSON "))
            seconds = data["duration_us"] / 1e6
            return LoadResult(
                requests=data["requests"],
                seconds=seconds,
                rps=data["requests"] / seconds if seconds else 0.0,
                p50_ms=data["p50_us"] / 1000,
                p90_ms=data["p90_us"] / 1000,
                p99_ms=data["p99_us"] / 1000,
                max_ms=data["max_us"] / 1000,
                non_2xx=data["status"],
                socket_errors={
                    k: data[k] for k in ("connect", "read", "write", "timeout") if data[k]
                },
            )
    return _parse_wrk_text(output)


_WRK_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _wrk_ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise LoadError(f"cannot read wrk's duration {text!r}")
    return float(match[1]) * _WRK_UNITS[match[2]]


def _parse_wrk_text(output: str) -> LoadResult:
    totals = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", output)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    percentiles = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)\s*$", output, re.MULTILINE))
    if totals is None or rps is None or not {"50", "99"} <= percentiles.keys():
        raise LoadError("wrk printed no report (was --latency given?):\n" + output[-2000:])
    maximum = re.search(r"Latency\s+\S+\s+\S+\s+(\S+)", output)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    socket_errors = {}
    if sockets is not None:
        names = ("connect", "read", "write", "timeout")
        socket_errors = {n: int(v) for n, v in zip(names, sockets.groups(), strict=True) if int(v)}
    return LoadResult(
        requests=int(totals[1]),
        seconds=_wrk_ms(totals[2] + totals[3]) / 1000,
        rps=float(rps[1]),
        p50_ms=_wrk_ms(percentiles["50"]),
        p90_ms=_wrk_ms(percentiles["90"]) if "90" in percentiles else None,
        p99_ms=_wrk_ms(percentiles["99"]),
        max_ms=_wrk_ms(maximum[1]) if maximum else 0.0,
        non_2xx=int(non_2xx[1]) if non_2xx else 0,
        socket_errors=socket_errors,
    )


def run_load(argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    """Run a load generator to its end and return what it printed. Call it inside a
    CpuWindow: the window counts its CPU time once it is reaped here."""
    process = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    if process.returncode != 0:
        raise LoadError(
            f"{argv[0]} exited {process.returncode}:\n{process.stdout[-2000:]}"
            f"\n{process.stderr[-2000:]}"
        )
    return process.stdout


def parse_pgbench(output: str, log_files: Sequence[Path]) -> LoadResult:
    """pgbench's summary, with the latency percentiles computed from its per-transaction
    logs (``-l``: one line per transaction, the third field its latency in us)."""
    tps = re.search(r"^tps = ([\d.]+)", output, re.MULTILINE)
    processed = re.search(r"number of transactions actually processed: (\d+)", output)
    failed = re.search(r"number of failed transactions: (\d+)", output)
    if tps is None or processed is None:
        raise LoadError("pgbench printed no summary:\n" + output[-2000:])
    latencies: list[float] = []
    for path in log_files:
        with path.open() as lines:
            for line in lines:
                parts = line.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    latencies.append(int(parts[2]) / 1000)
    if not latencies:
        raise LoadError("pgbench wrote no transaction log")
    latencies.sort()
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    requests = int(processed[1])
    rate = float(tps[1])
    return LoadResult(
        requests=requests,
        seconds=requests / rate if rate else 0.0,
        rps=rate,
        p50_ms=cuts[49],
        p90_ms=cuts[89],
        p99_ms=cuts[98],
        max_ms=latencies[-1],
        non_2xx=int(failed[1]) if failed else 0,
    )
