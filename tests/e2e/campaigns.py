"""Campaigns end to end: ``leadmail serve --no-worker`` and ``leadmail worker`` processes on
a fresh Postgres database, sending through the provider stand-in; leads imported with
``leadmail leads import``; what the stand-in received, message by message."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.cli import CliResult, cli_env, leadmail_command, run_cli
from tests.e2e.mail import SENDER, email_env, provider_api_key
from tests.e2e.server import LeadmailServer, server_with_key
from tests.support.standin import Provider, ProviderStandin, provider_standin
from tests.support.standin_batches import recipients

CAMPAIGNS = "/api/v1/campaigns"
READY_TIMEOUT_S = 20.0
VARIABLES = {
    "school_name": "Northwind Academy",
    "courses_link": "https://example.com/courses",
    "contact_email": "hello@example.com",
}


@dataclass
class Worker:
    """A running ``leadmail worker``."""

    process: subprocess.Popen[bytes]
    stderr_path: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def terminate(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; the exit code and the seconds it took."""
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"`leadmail worker` ignored SIGTERM for {timeout} s:\n{self.stderr()}")
        return code, time.monotonic() - began

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


@dataclass
class CampaignRig:
    provider: Provider
    standin: ProviderStandin
    server: LeadmailServer
    secret: str
    account: str
    env: dict[str, str]
    names: Counter[str] = field(default_factory=Counter)

    @property
    def workdir(self) -> Path:
        return self.server.workdir

    def client(self) -> httpx.Client:
        return self.server.client(self.secret)

    @contextlib.contextmanager
    def worker(self, name: str = "worker") -> Iterator[Worker]:
        """``leadmail worker`` with the server's settings, ready (its worker started)."""
        self.names[name] += 1
        stderr_path = self.workdir / f"{name}-{self.names[name]}.stderr"
        with stderr_path.open("wb") as err:
            process = subprocess.Popen(
                [*leadmail_command(), "worker"],
                # A worker listens nowhere: its links point at the server.
                env=cli_env(
                    self.server.database_url,
                    {**self.env, "LEADMAIL_PUBLIC_URL": self.server.base_url},
                ),
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        worker = Worker(process, stderr_path)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while stderr_events(worker.stderr(), "worker_started") == 0:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"`leadmail worker` did not start:\n{worker.stderr()}")
                time.sleep(0.05)
            yield worker
        finally:
            if process.poll() is None:
                worker.kill()

    def leads(self, count: int) -> list[str]:
        """``count`` new leads of the account (``leadmail leads import``), by address."""
        emails = [f"lead{n:04}@example.com" for n in range(count)]
        path = self.workdir / f"leads-{count}.csv"
        rows = [f"{email},Lead {n}" for n, email in enumerate(emails)]
        path.write_text("email,name\n" + "\n".join(rows) + "\n")
        done = self.cli("leads", "import", str(path), "--account", self.account)
        assert done.returncode == 0, done.describe()
        return emails

    def cli(self, *args: str) -> CliResult:
        return run_cli(args, cli_env(self.server.database_url, self.env), self.workdir)

    def create(self, **body: Any) -> str:
        given = {
            "name": "March open day",
            "template_id": "welcome",
            "audience": {},
            "variables": VARIABLES,
            "from": SENDER,
            **body,
        }
        with self.client() as api:
            answer = api.post(CAMPAIGNS, json=given)
        assert answer.status_code == 201, answer.text
        campaign_id: str = answer.json()["data"]["id"]
        return campaign_id

    def act(self, campaign_id: str, action: str) -> dict[str, Any]:
        with self.client() as api:
            answer = api.post(f"{CAMPAIGNS}/{campaign_id}/{action}")
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()["data"]
        return data

    def campaign(self, campaign_id: str) -> dict[str, Any]:
        with self.client() as api:
            answer = api.get(f"{CAMPAIGNS}/{campaign_id}")
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()["data"]
        return data

    def wait_for(self, campaign_id: str, status: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while (campaign := self.campaign(campaign_id))["status"] != status:
            if time.monotonic() > deadline:
                pytest.fail(f"the campaign is still {campaign} after {timeout} s")
            time.sleep(0.1)
        return campaign

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.standin.request_count < count:
            if time.monotonic() > deadline:
                pytest.fail(f"{self.standin.request_count} requests after {timeout} s")
            time.sleep(0.02)

    def delivered(self) -> Counter[str]:
        """How many times each address was delivered to (an answer replayed for an
        idempotency key seen before delivers nothing)."""
        found: Counter[str] = Counter()
        for request in self.standin.requests:
            if request.replayed or not request.answer.startswith("2"):
                continue
            assert request.is_batch, request.path
            for message in request.json():
                found.update(recipients(self.provider, message))
        return found


@contextlib.contextmanager
def campaign_rig(
    database_url: str,
    workdir: Path,
    provider: Provider,
    *,
    latency: float = 0.0,
    **settings: str,
) -> Iterator[CampaignRig]:
    """A stand-in for ``provider`` and ``leadmail serve --no-worker`` sending through it,
    with a key; workers are started by the test (``rig.worker()``). On SQLite the server
    sends campaigns itself."""
    api_key = provider_api_key(provider)
    sqlite = database_url.startswith("sqlite:")
    with provider_standin(api_key=api_key, latency=latency) as standin:
        env = email_env(provider, standin.url, api_key, **settings)
        with server_with_key(
            database_url,
            workdir,
            extra_env=env,
            key_first=sqlite,
            serve_args=[] if sqlite else ["--no-worker"],
        ) as server:
            assert server.primary is not None
            yield CampaignRig(
                provider, standin, server, server.primary.secret, server.primary.account, env
            )


def after(rig: CampaignRig, moment: float) -> list[float]:
    return [r.received_at for r in rig.standin.requests if r.received_at > moment]


def stderr_events(text: str, event: str) -> int:
    """How many JSON log lines of ``text`` are ``event``."""
    found = 0
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            data = json.loads(line)
            found += isinstance(data, dict) and data.get("event") == event
    return found


def env_with(base: Mapping[str, str], **more: str) -> dict[str, str]:
    return {**base, **{f"LEADMAIL_{k}": v for k, v in more.items()}}
