"""``leadmail serve`` in a process of its own: started on a free port, ready when handed
over, stopped with SIGTERM; optionally with a key of an account of its own."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.e2e.cli import CliResult, cli_env, leadmail_command, run_cli, run_cli_parallel
from tests.e2e.keys import IssuedKey, create_keys, issued_key
from tests.e2e.names import new_name
from tests.support.envelope import bearer
from tests.support.network import free_port

READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 10.0


@dataclass
class LeadmailServer:
    """A running ``leadmail serve`` process and what it wrote."""

    database_url: str
    workdir: Path
    port: int
    process: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path
    # Every secret issued for this server's database, to prove none is ever logged.
    secrets: list[str] = field(default_factory=list)
    primary: IssuedKey | None = None
    killed: bool = False
    stacks: str = ""  # every thread's stack, read before a kill (stacks_of)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def cli(self, *args: str) -> CliResult:
        return run_cli(args, cli_env(self.database_url), self.workdir)

    def create_keys(self, account: str, count: int = 1, label: str = "") -> list[IssuedKey]:
        keys = create_keys(self.database_url, self.workdir, account, count, label)
        self.secrets += [k.secret for k in keys]
        return keys

    def keys_for(self, *accounts: str) -> list[IssuedKey]:
        """One key for each of these new accounts, made in parallel."""
        args = [["keys", "create", "--account", a] for a in accounts]
        results = run_cli_parallel(args, cli_env(self.database_url), self.workdir)
        keys = [issued_key(r, a) for r, a in zip(results, accounts, strict=True)]
        self.secrets += [k.secret for k in keys]
        return keys

    def client(self, secret: str | None = None) -> httpx.Client:
        headers = {} if secret is None else bearer(secret)
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=HTTP_TIMEOUT_S)

    def async_client(self, secret: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.base_url,
            headers=bearer(secret),
            timeout=30.0,
        )

    def stop(self) -> int:
        """SIGTERM, then SIGKILL if it lingers. Idempotent; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.stacks = stacks_of(self.process.pid)
                self.killed = True
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def stop_gracefully(self) -> None:
        """Stop, and check SIGTERM alone was enough: a stop asked for exits 0 (cli/serving.py
        graceful_server)."""
        code = self.stop()
        assert not self.killed, (
            f"`leadmail serve` ignored SIGTERM:\n{self.stderr()}\nIts threads:\n{self.stacks}"
        )
        assert code == 0, f"exit code {code}:\n{self.stderr()}"


def stacks_of(pid: int) -> str:
    """What each thread of a live process is doing (py-spy, a dev dependency): why a
    server that should have exited has not."""
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        return "(py-spy not installed)"
    try:
        dumped = subprocess.run(
            [spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        return "(py-spy took over 20 s)"
    return dumped.stdout + dumped.stderr


def wait_for_stdout(server: LeadmailServer, needle: str, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while needle not in (out := server.stdout()):
        if time.monotonic() > deadline:
            pytest.fail(
                f"{needle!r} never appeared on stdout:\n{out}\n--- stderr ---\n{server.stderr()}"
            )
        time.sleep(0.05)
    return out


def _wait_until_ready(server: LeadmailServer) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    url = f"{server.base_url}/schema/openapi.json"
    while True:
        code = server.process.poll()
        if code is not None:
            pytest.fail(
                f"`leadmail serve` exited with {code} before it was ready:\n{server.stderr()}",
                pytrace=False,
            )
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(
                f"`leadmail serve` was not ready within {READY_TIMEOUT_S} s:\n{server.stderr()}",
                pytrace=False,
            )
        time.sleep(0.1)


@contextlib.contextmanager
def running_server(
    database_url: str,
    workdir: Path,
    extra_env: Mapping[str, str] | None = None,
    name: str = "serve",
    serve_args: Sequence[str] = (),
) -> Iterator[LeadmailServer]:
    """``leadmail serve --port <free> [serve_args]`` until the block ends; ready when it is
    yielded."""
    port = free_port()
    stdout_path = workdir / f"{name}-{port}.stdout"
    stderr_path = workdir / f"{name}-{port}.stderr"
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        process = subprocess.Popen(
            [*leadmail_command(), "serve", "--port", str(port), *serve_args],
            env=cli_env(database_url, extra_env),
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
    server = LeadmailServer(database_url, workdir, port, process, stdout_path, stderr_path)
    try:
        _wait_until_ready(server)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def server_with_key(
    database_url: str,
    workdir: Path,
    *,
    extra_env: Mapping[str, str] | None = None,
    key_first: bool = True,
    name: str = "serve",
    serve_args: Sequence[str] = (),
) -> Iterator[LeadmailServer]:
    """A running server and one key of an account of its own (``server.primary``).

    ``key_first``: make the key before the first start. On SQLite that keeps the database
    from being empty, so no demo key is printed and every secret the server sees is one we
    made. On Postgres the server starts on the empty database (and migrates it) and the key
    is made while it runs: no demo key may be printed there either. ``extra_env`` is given
    to the server only (the key is made with the plain CLI environment)."""
    primary = create_keys(database_url, workdir, new_name("primary"))[0] if key_first else None
    with running_server(database_url, workdir, extra_env, name, serve_args) as server:
        if primary is None:
            primary = create_keys(database_url, workdir, new_name("primary"))[0]
        server.primary = primary
        server.secrets.append(primary.secret)
        yield server
