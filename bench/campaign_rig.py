"""What a campaign scenario (K1-K4, bench/campaigns.py) runs on: a fresh database of its
own with an account "bench" and its leads (COPY), a tallying stand-in
(bench/standin_tally.py), ``leadmail serve`` (sending campaigns itself, or with
``--no-worker`` beside ``leadmail worker`` processes), and the API calls the scenario
makes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from tests.support.network import free_port

from bench.common import BIN, ROOT, log
from bench.database import account_with_key, fresh_database, prepare
from bench.scenarios import SENDER, TEMPLATE_ID, TEMPLATE_VARIABLES, own_template
from bench.servers import PROVIDER_KEY, Server, start_standin

CAMPAIGNS = "/api/v1/campaigns"
WORKER_READY_S = 30.0
LEAD_COLUMNS = ["lead_id", "account_id", "name", "email", "email_key", "source", "note",
                "created_at", "updated_at", "phone", "tags", "fields"]  # fmt: skip
FINISHED = ("done", "failed", "cancelled")


@dataclass
class Worker:
    """A running ``leadmail worker``, its JSON log in ``log_path``."""

    process: subprocess.Popen[bytes]
    log_path: Path

    def kill(self) -> None:
        """SIGKILL: its batches at the provider are never recorded."""
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Rig:
    db_url: str
    key: str
    env: dict[str, str]  # the LEADMAIL_* settings of the server and the workers
    server: Server
    cpu: int
    tmp: Path
    workers: list[Worker] = field(default_factory=list)

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key or self.key}"}
        return httpx.Client(base_url=self.server.url, headers=headers, timeout=60)

    def start_worker(self) -> Worker:
        """``leadmail worker`` on the server's core, once it has logged worker_started."""
        log_path = self.tmp / f"worker-{len(self.workers) + 1}.log"
        with log_path.open("wb") as out:
            process = subprocess.Popen(
                ["taskset", "-c", str(self.cpu), str(BIN / "leadmail"), "worker"],
                cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            )  # fmt: skip
        worker = Worker(process, log_path)
        self.workers.append(worker)
        deadline = time.monotonic() + WORKER_READY_S
        while b'"worker_started"' not in log_path.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"leadmail worker did not start:\n{log_path.read_text()}")
            time.sleep(0.05)
        return worker

    def create_campaign(self, client: httpx.Client, template_id: str = TEMPLATE_ID) -> str:
        if template_id != TEMPLATE_ID:  # the account's own copy, made first
            own_template(self.server.url, self.key)
        body = {
            "name": "Bench campaign",
            "template_id": template_id,
            "audience": {},
            "variables": TEMPLATE_VARIABLES,
            "from": SENDER,
        }
        answer = client.post(CAMPAIGNS, json=body)
        if answer.status_code != 201:
            raise RuntimeError(f"POST {CAMPAIGNS}: {answer.status_code} {answer.text[:500]}")
        campaign_id: str = answer.json()["data"]["id"]
        return campaign_id

    def campaign(self, client: httpx.Client, campaign_id: str) -> dict[str, Any]:
        answer = client.get(f"{CAMPAIGNS}/{campaign_id}")
        answer.raise_for_status()
        data: dict[str, Any] = answer.json()["data"]
        return data

    def failures(self, client: httpx.Client, campaign_id: str) -> list[str]:
        """The errors of a few of the campaign's failed recipients."""
        answer = client.get(f"{CAMPAIGNS}/{campaign_id}/recipients?status=failed&limit=3")
        return [item["error"] for item in answer.json()["data"]["items"]]

    def cancel(self, client: httpx.Client, campaign_id: str) -> None:
        client.post(f"{CAMPAIGNS}/{campaign_id}/cancel")

    def error_lines(self) -> int:
        """Lines at level error in the server's and the workers' logs."""
        paths = [self.server.log_path, *(w.log_path for w in self.workers)]
        found = 0
        for path in paths:
            for line in path.read_text(errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    found += json.loads(line).get("level") in ("error", "critical")
        return found


def lead_rows(account_id: str, count: int) -> list[tuple[Any, ...]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows: list[tuple[Any, ...]] = []
    for n in range(count):
        email = f"k-{n:06d}@bench.example.com"
        at = start + timedelta(milliseconds=n)
        rows.append((f"ld_bench{n:014d}", account_id, f"Lead {n}", email, email, "bench", "",
                     at, at, "", [], "{}"))  # fmt: skip
    return rows


async def copy_leads(db_url: str, account_id: str, count: int) -> float:
    """``count`` leads of the account by COPY, then ANALYZE; the seconds it took."""
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.copy_records_to_table(
            "leads", records=lead_rows(account_id, count), columns=LEAD_COLUMNS
        )
        await connection.execute("ANALYZE leads")
        return time.perf_counter() - started
    finally:
        await connection.close()


@contextlib.contextmanager
def campaign_rig(
    postgres_url: str,
    base_env: dict[str, str],
    tmp: Path,
    *,
    cpus: tuple[int, int],  # the server's and workers', the stand-in's
    leads: int,
    latency: float,
    settings: dict[str, str],  # LEADMAIL_* without the prefix
    no_worker: bool,
) -> Iterator[tuple[Rig, dict[str, Any]]]:
    """The rig, and a dict that holds, once the block ends, the stand-in's tally."""
    tally: dict[str, Any] = {}
    with fresh_database(postgres_url) as db_url, contextlib.ExitStack() as stack:
        key, account_id, _ = prepare(db_url, base_env)
        copied = asyncio.run(copy_leads(db_url, account_id, leads))
        log(f"{leads:,} leads copied in {copied:.1f} s")
        tally_path = tmp / "tally.json"
        standin_log = stack.enter_context((tmp / "standin.log").open("w"))
        standin = start_standin(cpus[1], latency, base_env, standin_log, tally_path)

        def read_tally() -> None:
            standin.stop()
            if tally_path.exists():
                tally.update(json.loads(tally_path.read_text()))

        stack.callback(read_tally)
        env = {
            **base_env,
            "LEADMAIL_DATABASE_URL": db_url,
            "LEADMAIL_LOG_FORMAT": "json",
            "LEADMAIL_EMAIL_API_KEY": PROVIDER_KEY,
            "LEADMAIL_EMAIL_BASE_URL": standin.url,
            "LEADMAIL_EMAIL_ALLOW_INSECURE": "true",  # the stand-in speaks plain HTTP
            **{f"LEADMAIL_{name}": value for name, value in settings.items()},
        }
        port = free_port()
        argv = [str(BIN / "leadmail"), "serve", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--no-worker"] if no_worker else []
        server = Server("leadmail", "leadmail serve", argv, env, tmp / "server.log", cpus[0], port)
        server.start()
        stack.callback(server.stop)
        server.wait_ready()
        rig = Rig(db_url, key, env, server, cpus[0], tmp)
        stack.callback(stop_workers, rig)
        yield rig, tally


def stop_workers(rig: Rig) -> None:
    for worker in rig.workers:
        worker.stop()


def other_account_key(rig: Rig, base_env: dict[str, str]) -> str:
    """A key of another account, "bench-other" (the sends measured beside a campaign)."""
    key, _ = account_with_key(rig.db_url, base_env, "bench-other")
    return key
