"""The rig of bench/campaign_rate.py: a fresh database (migrated, two accounts with keys,
N leads by COPY), the tallying stand-in in Postmark's batch dialect, ``leadmail serve``
with its worker, one campaign measured (campaign_rate.run_campaign), then the stand-in's
tally of recipients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from tests.support.network import free_port

from bench.campaign_rate import run_campaign
from bench.common import BIN, ROOT, log
from bench.cpu import PostgresSampler, process_cpu_seconds
from bench.database import account_with_key, database_name, fresh_database, leadmail_cli
from bench.servers import READY_TIMEOUT_S, child_env

POSTMARK_KEY = "00000000-0000-4000-8000-00000000b3c4"
COLUMNS = ["lead_id", "account_id", "name", "email", "email_key", "source", "note",
           "created_at", "updated_at", "phone", "tags", "fields"]  # fmt: skip


async def copy_leads(
    db_url: str, account_id: str, count: int, db_settings: dict[str, str] | None = None
) -> float:
    """``count`` leads of the account by COPY, then ANALYZE; the seconds it took.
    ``db_settings``: the database's own settings for later sessions."""
    at = datetime.now(UTC)
    rows = [(f"ld_cr{n:012d}{secrets.token_hex(3)}", account_id, f"Lead {n}",
             f"cr-{n}@bench.example.com", f"cr-{n}@bench.example.com", "bench", "", at, at,
             "", [], "{}") for n in range(count)]  # fmt: skip
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.copy_records_to_table("leads", records=rows, columns=COLUMNS)
        await connection.execute("ANALYZE leads")
        name = await connection.fetchval("SELECT current_database()")
        for setting, value in (db_settings or {}).items():
            await connection.execute(f'ALTER DATABASE "{name}" SET {setting} = {value}')
        return time.perf_counter() - started
    finally:
        await connection.close()


@contextlib.contextmanager
def process(argv: list[str], env: dict[str, str], out: Path) -> Iterator[subprocess.Popen[str]]:
    with out.open("w") as err:
        child = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=err, text=True)  # fmt: skip
    try:
        yield child
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()


def measure(
    leads: int, *, postgres_url: str, latency: float = 0.05, prefix: str = "claims_rate",
    settings: dict[str, str] | None = None, keep: bool = False, other: bool = True,
    db_settings: dict[str, str] | None = None, timeout: float = 1800.0, profile: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The whole rig for one campaign of ``leads`` leads (see the module's docstring);
    ``settings``: more LEADMAIL_* values for the server; ``keep``: the database is left
    (its URL in the report) for a look afterwards; ``db_settings``: ALTER DATABASE ... SET
    for the server's sessions (log_min_duration_statement, say); ``profile``: py-spy
    records the server while the campaign runs (``profile`` in the report: its raw file,
    read with ``python -m bench.profile``)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
    env = child_env()
    with contextlib.ExitStack() as stack:
        db_url = stack.enter_context(fresh_database(postgres_url, prefix, keep=keep))
        cli_env = {**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_FORMAT": "json"}
        leadmail_cli(["migrate"], cli_env)
        key, account_id = account_with_key(db_url, env, "bench")
        other_key, _ = account_with_key(db_url, env, "other")
        copy_s = asyncio.run(copy_leads(db_url, account_id, leads, db_settings or {}))
        log(f"{leads} leads copied in {copy_s:.1f} s into {db_url}")
        tally_file = tmp / "tally.json"
        standin_argv = [sys.executable, "-m", "bench.standin", "--tally", str(tally_file),
                        "--latency", str(latency), "--api-key", POSTMARK_KEY]  # fmt: skip
        standin = stack.enter_context(process(standin_argv, env, tmp / "standin.log"))
        assert standin.stdout is not None
        standin_port = int(standin.stdout.readline().split()[1])
        port = free_port()
        server_env = {**cli_env, "LEADMAIL_EMAIL_PROVIDER": "postmark",
                      "LEADMAIL_EMAIL_API_KEY": POSTMARK_KEY, "LEADMAIL_EMAIL_RATE": "0",
                      "LEADMAIL_EMAIL_BASE_URL": f"http://127.0.0.1:{standin_port}",
                      "LEADMAIL_EMAIL_ALLOW_INSECURE": "true",  # the local stand-in
                      **(settings or {})}  # fmt: skip
        argv = [str(BIN / "leadmail"), "serve", "--host", "127.0.0.1", "--port", str(port)]
        server = stack.enter_context(process(argv, server_env, tmp / "server.log"))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            with contextlib.suppress(httpx.TransportError):
                httpx.get(url + "/", timeout=1.0)
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"leadmail serve did not start; see {tmp / 'server.log'}")
            time.sleep(0.1)
        spy = None
        if profile:
            spy_argv = [str(BIN / "py-spy"), "record", "--pid", str(server.pid), "--rate", "100",
                        "--format", "raw", "--output", str(tmp / "profile.txt")]  # fmt: skip
            spy = stack.enter_context(process(spy_argv, env, tmp / "py-spy.log"))
        postgres = PostgresSampler(database_name(db_url))
        cpu = [process_cpu_seconds(server.pid), process_cpu_seconds(standin.pid)]
        postgres.start()
        found = run_campaign(url, key, leads, pid=server.pid,
                             other_key=other_key if other else None, timeout=timeout)  # fmt: skip
        used = [
            process_cpu_seconds(p) - c for p, c in zip((server.pid, standin.pid), cpu, strict=True)
        ]
        found["cpu_s"] = {"server": round(used[0], 1), "standin": round(used[1], 1),
                          "postgres": round(postgres.stop(), 1)}  # fmt: skip
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            spy.wait(timeout=60)
            found["profile"] = str(tmp / "profile.txt")
        server.terminate()
        server.wait(timeout=30)
        standin.terminate()
        standin.communicate(timeout=30)
        summary = json.loads(tally_file.read_text())  # bench/standin_tally.py
        tally = {"delivered": summary["deliveries"], "distinct": summary["distinct"]}
        found["standin"] = {**tally, "exactly_once": tally["delivered"] == tally["distinct"]
                            == found["counts"]["sent"] == leads}  # fmt: skip
        found["logs"] = str(tmp)
        if keep:
            found["database_url"] = db_url
    return found
