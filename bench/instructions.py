"""Instructions per request, counted by valgrind: (3)/(2) and (6)/(C) without the noise.

On a shared machine the same CPU-bound loop takes 75 to 115 ms from one second to the
next, so req/s ratios move by a fifth between runs. Instruction counts do not: the same
code on the same inputs counts the same to within a fraction of a percent. This runs POST
/leads on ceiling B and on leadmail, and a one-recipient send on ceiling C and on leadmail
(through the run's provider stand-in), in-process (the ASGI app driven directly, 64
requests in flight, against the run's Postgres: no HTTP server, which is the same for
both), under ``valgrind --tool=callgrind``, counting only the measured requests.

    python -m bench.instructions             # from bench.run, with its database and key
    python -m bench.instructions child APP   # one counted process (APP: one of APPS)

Instructions are not time (a system call or a cache miss counts little), so this is
context beside the measured req/s, not a replacement for it.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import uvloop

from bench.common import ROOT
from bench.scenarios import lead_body, send_body
from leadmail.collector import settle_collector

# What each counted process serves: (the app's import path or None for leadmail's, the
# path, the body). Pairs: ceiling_b/leadmail (POST /leads), ceiling_c/leadmail_send.
APPS: dict[str, tuple[str | None, str, Callable[[str], dict[str, Any]]]] = {
    "ceiling_b": ("bench.ceilings:insert_app", "/leads", lead_body),
    "leadmail": (None, "/api/v1/leads", lead_body),
    "ceiling_c": ("bench.ceiling_send:send_app", "/send", send_body),
    "leadmail_send": (None, "/api/v1/email/send", send_body),
}
REQUESTS = 400
WARMUP = 300
CONCURRENCY = 64
_COLLECTED = re.compile(r"Collected : (\d+)")

Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
                Coroutine[Any, Any, None]]  # fmt: skip


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def count(app: str, env: dict[str, str], log_path: Path, cpu: int) -> int:
    """Instructions per request of ``app`` (one of APPS), in a child process under
    callgrind."""
    with (
        tempfile.TemporaryDirectory(prefix="leadmail-callgrind-") as tmp,
        log_path.open("w") as log,
    ):
        argv = [
            "taskset", "-c", str(cpu), "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={tmp}/callgrind.out", "--log-file=" + f"{tmp}/valgrind.log",
            sys.executable, "-m", "bench.instructions", "child", app,
        ]  # fmt: skip
        subprocess.run(argv, env=env, cwd=ROOT, stderr=log, stdout=log, check=True, timeout=900)
        found = _COLLECTED.search(Path(tmp, "valgrind.log").read_text())
    if found is None:
        raise RuntimeError(f"callgrind counted nothing for {app} (see {log_path})")
    return int(found[1]) // REQUESTS


def _scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1", "method": "POST", "scheme": "http", "path": path,
        "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
        "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000), "state": {},
    }  # fmt: skip


async def _lifespan(app: Asgi) -> Callable[[], Awaitable[None]]:
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    task = asyncio.create_task(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, inbox.get, outbox.put)
    )
    started = await outbox.get()
    if started["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"start-up failed: {started}")

    async def stop() -> None:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await task

    return stop


async def _post(
    app: Asgi, path: str, body_of: Callable[[str], dict[str, Any]], key: str | None, n: int
) -> dict[int, int]:
    """``n`` POSTs of a new body each (new addresses), ``CONCURRENCY`` in flight; counts
    by status."""
    run = secrets.token_hex(4)
    statuses: dict[int, int] = {}
    numbers = iter(range(n))

    async def one(i: int) -> None:
        body = json.dumps(body_of(f"{run}-{i}")).encode()
        headers = [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if key is not None:
            headers.append((b"authorization", b"Bearer " + key.encode()))
        pending = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> Any:
            if pending:
                return pending.pop()
            await asyncio.Event().wait()  # a disconnect that never comes
            return None

        async def send(message: Any) -> None:
            if message["type"] == "http.response.start":
                statuses[message["status"]] = statuses.get(message["status"], 0) + 1

        await app(_scope(path, headers), receive, send)

    async def client() -> None:
        for i in numbers:
            await one(i)

    await asyncio.gather(*(client() for _ in range(CONCURRENCY)))
    return statuses


def _callgrind(on: bool) -> None:
    subprocess.run(
        ["callgrind_control", "--instr=" + ("on" if on else "off"), str(os.getpid())],
        check=True,
        stdout=subprocess.DEVNULL,
    )


async def _child(which: str) -> None:
    target, path, body_of = APPS[which]
    key: str | None = None
    if target is not None:
        module, name = target.split(":")
        app: Any = getattr(importlib.import_module(module), name)
    else:
        from leadmail.application import create_app
        from leadmail.config import Settings
        from leadmail.logs import configure_logging

        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        app, key = create_app(settings), os.environ["BENCH_API_KEY"]
    stop = await _lifespan(app)
    if target is None:
        settle_collector()  # as `leadmail serve` does once started
    else:  # the ceilings: the start-up frozen too, the thresholds as Python sets them
        gc.collect()
        gc.freeze()
    await _post(app, path, body_of, key, WARMUP)
    _callgrind(True)
    statuses = await _post(app, path, body_of, key, REQUESTS)
    _callgrind(False)
    await stop()
    if statuses != {200: REQUESTS}:
        raise SystemExit(f"{which}: expected {REQUESTS} answers of 200, got {statuses}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "child" and argv[1] in APPS:
        uvloop.run(_child(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
