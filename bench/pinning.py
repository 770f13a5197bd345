"""Keeping Postgres off the server's core for the run.

Linux only. Needs the right to change another user's processes (root); without it the run
goes on unpinned and says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import TracebackType

from bench.cpu import postgres_cpu_by_pid


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

    @contextlib.contextmanager
    def floating(self) -> Iterator[None]:
        """Postgres on every core it had for a while (a scenario whose work is Postgres's
        own, such as BA's bulk actions, which run two batches at once), then pinned
        again."""
        if not self.pinned:
            yield
            return
        self.__exit__(None, None, None)  # every process back on the cores it had
        try:
            yield
        finally:
            self.__enter__()
