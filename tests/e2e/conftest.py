"""End-to-end fixtures: the real ``leadmail`` command, run as subprocesses, driven over HTTP.

Nothing here runs the app in-process: every server is ``leadmail serve`` in a process of
its own, every key comes from ``leadmail keys create``, exactly as an operator does it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.postgres import fresh_database
from tests.support.standin import Provider, RecordedRequest

READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
CLI_TIMEOUT_S = 60.0
HTTP_TIMEOUT_S = 10.0

_KEY_ID = re.compile(r"\b(key_[A-Za-z0-9_-]+)")


def leadmail_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("leadmail")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "leadmail.cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# Where the subprocesses keep their bytecode. With PYTHONDONTWRITEBYTECODE set (as on the
# machines this runs on) every `leadmail` start would compile litestar, piccolo and the rest
# from source, about 0.6 s each time; a cache outside the repo and the venv avoids that.
_PYCACHE = Path(tempfile.gettempdir()) / f"leadmail-e2e-pycache-{os.getuid()}"


def cli_env(database_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without any LEADMAIL_* setting of its own, plus ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEADMAIL_")}
    # Unbuffered output would hide a missing flush of what `serve` prints on stdout.
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(_PYCACHE))
    env["LEADMAIL_DATABASE_URL"] = database_url
    env["LEADMAIL_LOG_FORMAT"] = "json"
    env.update(extra or {})
    return env


def new_name(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"


def new_email(tag: str) -> str:
    return f"{new_name(tag)}@example.com"


@dataclass(frozen=True)
class CliResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return (
            f"`leadmail {' '.join(self.args)}` exited {self.returncode}\n"
            f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"
        )


def run_cli_jobs(
    jobs: Sequence[tuple[Sequence[str], Mapping[str, str]]], cwd: Path
) -> list[CliResult]:
    """Run several ``leadmail`` commands at once, each with its environment (each start
    costs a second or two of imports)."""
    processes = [
        (
            tuple(args),
            subprocess.Popen(
                [*leadmail_command(), *args],
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for args, env in jobs
    ]
    results: list[CliResult] = []
    for args, process in processes:
        try:
            out, err = process.communicate(timeout=CLI_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"`leadmail {' '.join(args)}` did not finish:\n{err}")
        results.append(CliResult(args, process.returncode, out, err))
    return results


def run_cli_parallel(
    commands: Sequence[Sequence[str]], env: Mapping[str, str], cwd: Path
) -> list[CliResult]:
    return run_cli_jobs([(args, env) for args in commands], cwd)


def run_cli(args: Sequence[str], env: Mapping[str, str], cwd: Path) -> CliResult:
    return run_cli_parallel([args], env, cwd)[0]


@dataclass(frozen=True)
class IssuedKey:
    account: str
    key_id: str
    secret: str


def issued_key(result: CliResult, account: str) -> IssuedKey:
    """Read a ``keys create`` result: the key alone on the last stdout line."""
    assert result.returncode == 0, result.describe()
    lines = result.stdout.splitlines()
    assert lines, result.describe()
    secret = lines[-1]
    assert secret, result.describe()
    assert secret == secret.strip(), result.describe()
    assert " " not in secret, result.describe()
    found = _KEY_ID.search(result.stdout)
    assert found is not None, f"no key id in the output\n{result.describe()}"
    return IssuedKey(account=account, key_id=found.group(1), secret=secret)


def create_keys(
    database_url: str, cwd: Path, account: str, count: int = 1, label: str = ""
) -> list[IssuedKey]:
    """``count`` keys for one account. The first is made alone (it creates the account and
    may migrate); the rest in parallel."""
    env = cli_env(database_url)
    args = ["keys", "create", "--account", account, "--label", label]
    keys = [issued_key(run_cli(args, env, cwd), account)]
    if count > 1:
        keys += [issued_key(r, account) for r in run_cli_parallel([args] * (count - 1), env, cwd)]
    return keys


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
        headers = {} if secret is None else {"Authorization": f"Bearer {secret}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=HTTP_TIMEOUT_S)

    def async_client(self, secret: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {secret}"},
            timeout=30.0,
        )

    def log_records(self) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for line in self.stderr().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                record = json.loads(line)
                if isinstance(record, dict):
                    records.append(record)
        return records

    def access_log(self, request_ids: Sequence[str], timeout: float = 5.0) -> list[dict[str, Any]]:
        """The access-log records of these requests, waiting for every one to be written
        (the line is written after the response is sent)."""
        deadline = time.monotonic() + timeout
        while True:
            records = [
                r
                for r in self.log_records()
                if r.get("event") == "request" and r.get("request_id") in request_ids
            ]
            if {r["request_id"] for r in records} >= set(request_ids):
                return records
            if time.monotonic() > deadline:
                pytest.fail(
                    f"no access-log line for some of {request_ids} within {timeout} s:\n"
                    f"{self.stderr()}"
                )
            time.sleep(0.05)

    def stop(self) -> int:
        """SIGTERM, then SIGKILL if it lingers. Idempotent; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.killed = True
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def stop_gracefully(self) -> None:
        """Stop, and check SIGTERM alone was enough. uvicorn finishes its shutdown and then
        re-raises the signal, so dying of SIGTERM counts as a clean exit, like 0."""
        code = self.stop()
        assert not self.killed, f"`leadmail serve` ignored SIGTERM:\n{self.stderr()}"
        assert code in (0, -signal.SIGTERM), f"exit code {code}:\n{self.stderr()}"


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
) -> Iterator[LeadmailServer]:
    """``leadmail serve --port <free>`` until the block ends; ready when it is yielded."""
    port = free_port()
    stdout_path = workdir / f"{name}-{port}.stdout"
    stderr_path = workdir / f"{name}-{port}.stderr"
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        process = subprocess.Popen(
            [*leadmail_command(), "serve", "--port", str(port)],
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


def _server_with_key(
    database_url: str,
    workdir: Path,
    *,
    key_first: bool,
    extra_env: Mapping[str, str] | None = None,
    name: str = "serve",
) -> Iterator[LeadmailServer]:
    """A running server and one key of an account of its own (``server.primary``).

    ``key_first``: make the key before the first start. On SQLite that keeps the database
    from being empty, so no demo key is printed and every secret the server sees is one we
    made. On Postgres the server starts on the empty database (and migrates it) and the key
    is made while it runs: no demo key may be printed there either. ``extra_env`` is given
    to the server only (the key is made with the plain CLI environment)."""
    primary = create_keys(database_url, workdir, new_name("primary"))[0] if key_first else None
    with running_server(database_url, workdir, extra_env, name) as server:
        if primary is None:
            primary = create_keys(database_url, workdir, new_name("primary"))[0]
        server.primary = primary
        server.secrets.append(primary.secret)
        yield server


@contextlib.contextmanager
def server_with_key(
    database_url: str,
    workdir: Path,
    *,
    extra_env: Mapping[str, str] | None = None,
    key_first: bool = True,
    name: str = "serve",
) -> Iterator[LeadmailServer]:
    """``_server_with_key`` as a context manager, for tests that start servers of their own
    with settings of their own (an email provider, a template directory)."""
    yield from _server_with_key(
        database_url, workdir, key_first=key_first, extra_env=extra_env, name=name
    )


@pytest.fixture(scope="session")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadmailServer]:
    """One server on an embedded SQLite file, shared by the session."""
    workdir = tmp_path_factory.mktemp("sqlite-server")
    yield from _server_with_key(f"sqlite:///{workdir / 'leadmail.db'}", workdir, key_first=True)


@pytest.fixture(scope="session")
async def e2e_postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """An empty Postgres database for the session's server (``leadmail serve`` migrates it)."""
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(scope="session")
def postgres_e2e_server(
    e2e_postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LeadmailServer]:
    """One server on a fresh Postgres database, shared by the session."""
    workdir = tmp_path_factory.mktemp("postgres-server")
    yield from _server_with_key(e2e_postgres_url, workdir, key_first=False)


@pytest.fixture(
    scope="session",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def server(request: pytest.FixtureRequest) -> LeadmailServer:
    """The shared server, once per database."""
    name = "sqlite_server" if request.param == "sqlite" else "postgres_e2e_server"
    running: LeadmailServer = request.getfixturevalue(name)
    return running


@pytest.fixture
def primary_key(server: LeadmailServer) -> IssuedKey:
    assert server.primary is not None
    return server.primary


# Email: servers with a real provider configuration, pointed at the stand-in of
# tests/support/standin.py, and what the stand-in received.

MAILGUN_DOMAIN = "mg.academy.example.com"


def provider_api_key(provider: Provider) -> str:
    """A fresh key in the provider's own shape (Mailpit's is ``user:password``), unique to
    the run so that finding it anywhere cannot be a coincidence."""
    token = secrets.token_hex(12)
    match provider:
        case "resend":
            return f"re_{token}"
        case "postmark":
            return str(uuid.uuid4())
        case "sendgrid":
            return f"SG.{token}.{secrets.token_hex(8)}"
        case "mailgun":
            return f"key-{token}"
        case "mailpit":
            return f"leadmail:{token}"


def email_env(provider: Provider, base_url: str, api_key: str, **settings: str) -> dict[str, str]:
    """The server settings that send through ``provider`` at ``base_url``; ``settings``
    adds LEADMAIL_EMAIL_* / LEADMAIL_* values by their name without the prefix."""
    env = {
        "LEADMAIL_EMAIL_PROVIDER": provider,
        "LEADMAIL_EMAIL_API_KEY": api_key,
        "LEADMAIL_EMAIL_BASE_URL": base_url,
    }
    if provider == "mailgun":
        env["LEADMAIL_EMAIL_DOMAIN"] = MAILGUN_DOMAIN
    env.update({f"LEADMAIL_{name}": value for name, value in settings.items()})
    return env


def provider_path(provider: Provider) -> str:
    """The API path each provider documents for sending one message."""
    match provider:
        case "resend":
            return "/emails"
        case "postmark":
            return "/email"
        case "sendgrid":
            return "/v3/mail/send"
        case "mailgun":
            return f"/v3/{MAILGUN_DOMAIN}/messages"
        case "mailpit":
            return "/api/v1/send"


@dataclass(frozen=True)
class Delivered:
    """One message as a provider received it, whatever its wire format."""

    sender_name: str
    sender: str
    to: tuple[str, ...]  # addresses only
    subject: str
    html: str


def _mailbox(text: str) -> tuple[str, str]:
    name, address = email.utils.parseaddr(text)
    return name, address


def delivered(request: RecordedRequest) -> Delivered:
    """Read a request the stand-in recorded in its provider's format."""
    match request.provider:
        case "resend":
            data = request.json()
            name, sender = _mailbox(data["from"])
            to = tuple(_mailbox(box)[1] for box in data["to"])
            return Delivered(name, sender, to, data["subject"], data["html"])
        case "postmark":
            data = request.json()
            name, sender = _mailbox(data["From"])
            to = tuple(address for _, address in email.utils.getaddresses([data["To"]]))
            return Delivered(name, sender, to, data["Subject"], data["HtmlBody"])
        case "sendgrid":
            data = request.json()
            [personalization] = data["personalizations"]
            [content] = data["content"]
            assert content["type"] == "text/html", content
            to = tuple(box["email"] for box in personalization["to"])
            sender = data["from"]
            return Delivered(
                sender.get("name", ""), sender["email"], to, data["subject"], content["value"]
            )
        case "mailgun":
            form = request.form()
            fields: dict[str, list[str]] = {}
            for key, value in form:
                fields.setdefault(key, []).append(value)
            [sender_text], [subject], [html] = fields["from"], fields["subject"], fields["html"]
            name, sender = _mailbox(sender_text)
            to = tuple(_mailbox(box)[1] for box in fields["to"])
            return Delivered(name, sender, to, subject, html)
        case "mailpit":
            data = request.json()
            sender = data["From"]
            to = tuple(box["Email"] for box in data["To"])
            return Delivered(
                sender.get("Name", ""), sender["Email"], to, data["Subject"], data["HTML"]
            )
    raise AssertionError(f"not a provider's send request: {request.method} {request.target}")


def wait_for(what: str, check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``check`` until it holds, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def assert_not_logged(server: LeadmailServer, label: str, *needles: str) -> None:
    """None of ``needles`` is in anything the server wrote (stdout and stderr)."""
    output = {"stdout": server.stdout(), "stderr": server.stderr()}
    for needle in needles:
        assert needle, f"empty needle for {label}"
        for stream, text in output.items():
            assert needle not in text, f"{label} found in the server's {stream}"
