"""What the driver measures, and how: CPU shares and RSS from /proc, wrk and pgbench runs.

Linux only (/proc). CPU figures are percentages of one core: 100 means a core was busy
for the whole window.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

CLK_TCK = os.sysconf("SC_CLK_TCK")


# /proc


def process_cpu_seconds(pid: int) -> float:
    """User plus system time of a process, all its threads included."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name is in parentheses and may hold spaces: split after its last ")".
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


_CLIENT_BACKEND = re.compile(r"\(\d+\)|\[local\]")


def postgres_cpu_by_pid(database: str | None = None) -> dict[int, float]:
    """CPU time of the processes named ``postgres``: the server's own, and the client
    backends connected to ``database`` (all of them if None)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat[stat.index("(") + 1 : stat.rindex(")")] != "postgres":
                continue
            # "postgres: 15/main: user db 127.0.0.1(5432) idle" for a client backend
            title = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        client = database is not None and _CLIENT_BACKEND.search(title)
        if client and f" {database} " not in title:
            continue  # another database's client: not this benchmark's
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return found


def postgres_pids() -> list[int]:
    """Every process named ``postgres`` on this machine, the postmaster first (lowest pid:
    it starts before the processes it forks)."""
    return sorted(postgres_cpu_by_pid())


class PinnedPostgres:
    """Pins this machine's Postgres processes to one core for the duration, then puts
    back the cores each had (backends forked meanwhile get the postmaster's). Pinning the
    postmaster first makes every backend forked later inherit the core.

    Without this, backends float over both cores and take turns on the server's: the
    server then measures slower and with a longer tail for reasons that are not its own.
    Needs the right to change another user's processes (root); ``note`` says what
    happened."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.pinned = False
        self.note = ""
        self._saved: dict[int, set[int]] = {}

    def __enter__(self) -> PinnedPostgres:
        if self.cpu is None:
            self.note = "Postgres not pinned (--postgres-cpu none): it floats over all cores"
            return self
        try:
            for pid in postgres_pids():
                try:
                    self._saved[pid] = os.sched_getaffinity(pid)
                    os.sched_setaffinity(pid, {self.cpu})
                except ProcessLookupError:
                    continue
        except PermissionError:
            self.__exit__(None, None, None)
            self.note = "Postgres not pinned (no permission to move its processes)"
            return self
        self.pinned = bool(self._saved)
        if not self.pinned:
            self.note = "no local Postgres process found to pin"
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        if not self._saved:
            return
        postmaster = self._saved[min(self._saved)]
        for pid in postgres_pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.sched_setaffinity(pid, self._saved.get(pid, postmaster))
        self._saved.clear()


class PostgresSampler:
    """CPU used by Postgres processes between ``start()`` and ``stop()``, backends that
    come and go meanwhile included (pgbench's connections end before the window does):
    each is sampled every ``interval`` seconds, so at most that much of a departing
    backend's time is missed."""

    def __init__(self, database: str | None, interval: float = 0.2) -> None:
        self._database = database
        self._interval = interval
        self._baseline: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pg-sampler", daemon=True)

    def start(self) -> None:
        self._baseline = postgres_cpu_by_pid(self._database)
        self._last = dict(self._baseline)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self._last.update(postgres_cpu_by_pid(self._database))

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        self._last.update(postgres_cpu_by_pid(self._database))
        return sum(t - self._baseline.get(pid, 0.0) for pid, t in self._last.items())


def core_ticks() -> list[tuple[int, int, int]]:
    """(busy, of which interrupts, total) clock ticks of each CPU since boot. Interrupt
    time (loopback networking is mostly softirq) is charged to no process."""
    cores = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if not re.fullmatch(r"cpu\d+", name):
            continue
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in values[:8])
        busy = user + nice + system + irq + softirq + steal
        cores.append((busy, irq + softirq, busy + idle + iowait))
    return cores


def children_cpu_seconds() -> float:
    """CPU time of the children this process has waited for (wrk, pgbench), so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class CpuShares:
    """Percent of one core used during a window, by each party."""

    server: float
    load: float  # the load generator (wrk or pgbench)
    standin: float
    postgres: float
    interrupts: float  # all CPUs
    cores: tuple[float, ...]  # busy percent of each CPU, whoever used it

    @property
    def other(self) -> float:
        """Busy time nobody above accounts for: other processes on the machine, kernel
        threads. A large figure means the run was disturbed."""
        ours = self.server + self.load + self.standin + self.postgres + self.interrupts
        return max(0.0, sum(self.cores) - ours)

    def as_dict(self) -> dict[str, object]:
        return {
            "server": round(self.server, 1),
            "load_generator": round(self.load, 1),
            "standin": round(self.standin, 1),
            "postgres": round(self.postgres, 1),
            "interrupts": round(self.interrupts, 1),
            "other": round(self.other, 1),
            "cores": [round(c, 1) for c in self.cores],
        }


class _Snapshot(NamedTuple):
    at: float
    server: float
    standin: float
    children: float
    cores: list[tuple[int, int, int]]


class CpuWindow:
    """``with CpuWindow(server_pid, standin_pid) as w: <run the load generator, reap it>``;
    then ``w.shares``. The load generator must be a child reaped inside the window."""

    def __init__(
        self, server_pid: int | None, standin_pid: int | None, database: str | None = None
    ) -> None:
        self._server_pid = server_pid
        self._standin_pid = standin_pid
        self._database = database
        self.shares = CpuShares(0, 0, 0, 0, 0, ())

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(
            at=time.monotonic(),
            server=process_cpu_seconds(self._server_pid) if self._server_pid else 0.0,
            standin=process_cpu_seconds(self._standin_pid) if self._standin_pid else 0.0,
            children=children_cpu_seconds(),
            cores=core_ticks(),
        )

    def __enter__(self) -> CpuWindow:
        self._postgres = PostgresSampler(self._database)
        self._postgres.start()
        self._start = self._snapshot()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        start, end = self._start, self._snapshot()
        postgres = self._postgres.stop()
        wall = max(end.at - start.at, 1e-9)
        spans = [
            (b1 - b0, i1 - i0, max(t1 - t0, 1))
            for (b0, i0, t0), (b1, i1, t1) in zip(start.cores, end.cores, strict=True)
        ]
        self.shares = CpuShares(
            server=100.0 * (end.server - start.server) / wall,
            load=100.0 * (end.children - start.children) / wall,
            standin=100.0 * (end.standin - start.standin) / wall,
            postgres=100.0 * postgres / wall,
            interrupts=sum(100.0 * irq / total for _, irq, total in spans),
            cores=tuple(100.0 * busy / total for busy, _, total in spans),
        )


def wait_idle(pid: int, *, below: float = 5.0, window: float = 0.3, timeout: float = 60.0) -> float:
    """Wait until the process uses less than ``below`` percent of a core over ``window``
    seconds (work left over from the previous run, such as sends still in flight, is
    done). Returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = process_cpu_seconds(pid)
        time.sleep(window)
        if 100.0 * (process_cpu_seconds(pid) - before) / window < below:
            break
    return time.monotonic() - started


# Load generators.


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
