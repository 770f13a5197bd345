"""The longest the import job holds the event loop: the job (LeadImportService on the
Piccolo repository) run in this process on the bench's Postgres database, beside a task
that sleeps 1 ms at a time and records how late it wakes (wall time) and how much CPU the
loop spent elsewhere meanwhile (thread time: what the job held it for, whatever else the
machine runs). The garbage collector is set as `leadmail serve` sets it.

    python -m bench.loop_lag [POSTGRES_URL]    # on a database of its own, dropped after
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from bench.common import log

MB = 1_000_000
PIECE = 1 << 16  # of the upload


def _parsed_row() -> bytes:
    """A row just under the longest row read (MAX_ROW_CHARS): csv parses it in one go."""
    from leadmail.domain.lead_csv import MAX_ROW_CHARS

    return b"email,name,note\nlag@bench.example.com,N," + b"z" * (MAX_ROW_CHARS - 100) + b"\n"


def _quoted_lines() -> bytes:
    """Ten rows of 1 MB, each a quoted note of 100,000 short lines with doubled quotes."""
    row = b'lag@bench.example.com,N,"' + b'a ""q"",\n' * 100_000 + b'"'
    return b"email,name,note\n" + b"\n".join([row] * 10) + b"\n"


def _rows() -> bytes:
    lines = [b"email,name,note"]
    lines += [b'lag%d@bench.example.com,Lead %d,"a, note"' % (n, n) for n in range(20_000)]
    return b"\n".join(lines) + b"\n"


FILES: dict[str, Callable[[], bytes]] = {
    "one line of 40 MB": lambda: b"email,name\n" + b"x" * (40 * MB),
    "20 lines of 2 MB": lambda: (
        b"email,name,note\n" + b"\n".join([b"lag@bench.example.com,N," + b"y" * (2 * MB)] * 20)
    ),
    "a row of MAX_ROW_CHARS, parsed": _parsed_row,
    "10 quoted notes of 100,000 lines": _quoted_lines,
    "20,000 ordinary rows": _rows,
}


async def _body(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), PIECE):
        yield data[start : start + PIECE]


async def _probe(late: list[float], held: list[float]) -> None:
    """Until cancelled: sleep 1 ms; how late it woke, and the loop's CPU meanwhile."""
    while True:
        wall, cpu = time.perf_counter(), time.thread_time()
        await asyncio.sleep(0.001)
        late.append(time.perf_counter() - wall - 0.001)
        held.append(time.thread_time() - cpu)


async def _measure(db_url: str) -> dict[str, Any]:
    from leadmail.adapters.db.database import Database
    from leadmail.adapters.db.keys import PiccoloApiKeyStore
    from leadmail.adapters.db.lead_imports import PiccoloLeadImportRepository
    from leadmail.adapters.memory.jobs import InProcessJobQueue
    from leadmail.collector import settle_collector
    from leadmail.domain.clock import utc_now
    from leadmail.services.lead_imports import ImportOptions, LeadImportService

    found: dict[str, Any] = {}
    async with Database.from_url(db_url).running() as database:
        key = await PiccoloApiKeyStore(database).create_key(
            account_name=f"bench-loop-lag-{secrets.token_hex(4)}",
            label="bench",
            digest=secrets.token_hex(32),
            prefix="lm_lag",
            now=utc_now(),
        )
        account_id = key.account_id
        settle_collector()
        for name, make in FILES.items():
            data = make()
            service = LeadImportService(PiccoloLeadImportRepository(database), InProcessJobQueue())
            started = await service.start(account_id, ImportOptions(), _body(data), enqueue=False)
            late: list[float] = []
            held: list[float] = []
            probing = asyncio.create_task(_probe(late, held))
            began = time.perf_counter()
            try:
                done = await service.run(started.import_id)
            finally:
                probing.cancel()
            seconds = time.perf_counter() - began
            late.sort()
            held.sort()
            assert done is not None
            found[name] = {
                "mb": round(len(data) / MB, 2),
                "job_s": round(seconds, 2),
                "status": done.status.value,
                "failed": done.failed,
                "created": done.created,
                "cpu_max_ms": round(held[-1] * 1000, 2),
                "cpu_p99_ms": round(held[int(0.99 * len(held))] * 1000, 2),
                "late_max_ms": round(late[-1] * 1000, 2),
                "late_p99_ms": round(late[int(0.99 * len(late))] * 1000, 2),
            }
            log(f"loop lag, {name}: {found[name]}")
    worst = max(found.values(), key=lambda f: f["cpu_max_ms"])
    return {"files": found, "worst_cpu_ms": worst["cpu_max_ms"]}


def measure_loop_lag(db_url: str) -> dict[str, Any]:
    """Each file of FILES imported in this process on ``db_url`` (migrated), with its
    longest loop stalls."""
    return asyncio.run(_measure(db_url))


def main(argv: list[str]) -> int:
    from tests.postgres import fresh_migrated_database

    url = argv[0] if argv else "postgresql://postgres@127.0.0.1:5432/postgres"

    async def run() -> dict[str, Any]:
        async with fresh_migrated_database(url) as fresh:
            return await _measure(fresh)

    result = asyncio.run(run())
    for name, row in result["files"].items():
        print(f"{name:<34} {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
