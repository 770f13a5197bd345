"""CPU accounting from /proc: who used how much of which core during a measured run, and
the server's RSS.

Linux only (/proc). CPU figures are percentages of one core: 100 means a core was busy
for the whole window.
"""

from __future__ import annotations

import os
import re
import resource
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

CLK_TCK = os.sysconf("SC_CLK_TCK")


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
