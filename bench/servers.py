"""The processes the benchmark measures and the provider stand-in they send to.

Every server is ONE process started the production way, pinned to one core with taskset:
``leadmail serve`` for leadmail, the uvicorn command ``leadmail serve`` uses (uvloop,
httptools, no access log) for the ceilings and the FastAPI peer. The stand-in
(bench/standin.py) runs on the load generator's core.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import httpx
from tests.support.network import free_port

from bench.common import BIN, ROOT, log

PROVIDER_KEY = "re_bench_standin_key"
READY_TIMEOUT_S = 30.0


def child_env() -> dict[str, str]:
    """The caller's environment without LEADMAIL_* or BENCH_* settings of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEADMAIL_", "BENCH_"))}
    # Bytecode cached outside the repo: with PYTHONDONTWRITEBYTECODE every start would
    # compile litestar, piccolo and the rest again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(
        Path(tempfile.gettempdir()) / f"leadmail-bench-pycache-{os.getuid()}"
    )
    env["PYTHONUNBUFFERED"] = "1"  # as in the service's image
    # `serve` and `worker` on Postgres sign unsubscribe links with a key of their own, and
    # a worker needs the links' base (nobody follows them here).
    env["LEADMAIL_SECRET_KEY"] = "bench-unsubscribe-signing-key-0123456789"
    env["LEADMAIL_PUBLIC_URL"] = "http://127.0.0.1:8000"
    # The request budgets off (issue 28): a benchmark's one key makes far more than 1,200
    # requests a minute, and measures the service, not the 429s.
    env["LEADMAIL_RATE_LIMIT"] = "0"
    env["LEADMAIL_PUBLIC_RATE_LIMIT"] = "0"
    return env


@dataclass
class Server:
    name: str
    title: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    cpu: int
    port: int
    process: subprocess.Popen[bytes] | None = None
    modules: dict[str, bool] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        with self.log_path.open("wb") as out:
            # taskset execs the command, so the pid is the server's own.
            self.process = subprocess.Popen(
                ["taskset", "-c", str(self.cpu), *self.argv],
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start:\n{self.log_tail()}")
            try:
                httpx.get(self.url + "/", timeout=1.0)  # any answer will do
            except httpx.TransportError:
                time.sleep(0.1)
                continue
            self.modules = loaded_modules(self.pid, ("uvloop", "httptools"))
            return
        raise RuntimeError(f"{self.name} did not answer in {READY_TIMEOUT_S} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # uvicorn shuts down gracefully on SIGTERM
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def loaded_modules(pid: int, names: tuple[str, ...]) -> dict[str, bool]:
    """Which of these C extensions the process has mapped: proof that uvicorn's "auto"
    loop and parser picked uvloop and httptools."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {name: f"/{name}/" in maps for name in names}


def build_servers(
    cpu: int, env: dict[str, str], db_url: str, account_id: str, standin_url: str, tmp: Path
) -> dict[str, Server]:
    """Every server, not started, by the name scenarios give as their ``server``."""

    def uvicorn(app: str, port: int) -> list[str]:
        return [
            str(BIN / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(port),
            "--loop", "uvloop", "--http", "httptools", "--lifespan", "on",
            "--no-access-log", "--no-server-header", "--log-level", "warning",
        ]  # fmt: skip

    bare_env = {**env, "BENCH_DATABASE_URL": db_url, "BENCH_ACCOUNT_ID": account_id}
    send_env = {**bare_env, "BENCH_PROVIDER_URL": standin_url, "BENCH_PROVIDER_KEY": PROVIDER_KEY}
    ours_env = {
        **env,
        "LEADMAIL_DATABASE_URL": db_url,
        "LEADMAIL_LOG_FORMAT": "json",
        "LEADMAIL_EMAIL_PROVIDER": "resend",
        "LEADMAIL_EMAIL_API_KEY": PROVIDER_KEY,
        "LEADMAIL_EMAIL_BASE_URL": standin_url,
        "LEADMAIL_EMAIL_ALLOW_INSECURE": "true",  # the stand-in speaks plain HTTP
    }
    specs = {
        "ceiling_a": ("bare Litestar (ceiling A)", "bench.ceilings:json_app", bare_env),
        "ceiling_b": ("bare Litestar + asyncpg (ceiling B)", "bench.ceilings:insert_app",
                      bare_env),
        "ceiling_c": ("bare Litestar + asyncpg + httpx (ceiling C)",
                      "bench.ceiling_send:send_app", send_env),
        "leadmail": ("leadmail serve", None, ours_env),
        "peer": ("FastAPI + SQLAlchemy (peer)", "bench.peer_fastapi:app", bare_env),
    }  # fmt: skip
    servers = {}
    for name, (title, app, server_env) in specs.items():
        port = free_port()
        argv = (
            [str(BIN / "leadmail"), "serve", "--host", "127.0.0.1", "--port", str(port)]
            if app is None
            else uvicorn(app, port)
        )
        servers[name] = Server(name, title, argv, server_env, tmp / f"{name}.log", cpu, port)
    return servers


def start_servers(
    servers: dict[str, Server], wanted: set[str], stack: contextlib.ExitStack
) -> dict[str, Server]:
    """Starts the wanted ones, one at a time, each stopped when ``stack`` closes."""
    started = {}
    for name, server in servers.items():
        if name in wanted:
            server.start()
            stack.callback(server.stop)
            server.wait_ready()
            started[name] = server
            log(f"{server.title}: pid {server.pid} on cpu {server.cpu}, {server.url}")
    return started


@dataclass
class Standin:
    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> int | None:
        """Stops it; the number of requests it answered."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            return None
        for line in out.splitlines():
            if line.startswith("REQUESTS "):
                return int(line.split()[1])
        return None


def start_standin(
    cpu: int, latency: float, env: dict[str, str], log_file: TextIO, tally: Path | None = None
) -> Standin:
    """``tally``: where the stand-in writes who it delivered to when it stops."""
    argv = [
        "taskset", "-c", str(cpu), sys.executable, "-m", "bench.standin",
        "--latency", str(latency), "--api-key", PROVIDER_KEY,
        *(["--tally", str(tally)] if tally else []),
    ]  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=log_file, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"the provider stand-in did not start (it printed {line!r})")
    return Standin(process, int(line.split()[1]))
