"""The benchmark driver.

    python -m bench.run [--quick] [--duration S] [--repeats N] [--connections 64] [--only 3,8]

One run: a fresh Postgres database (dropped at the end) migrated by ``leadmail migrate``, an
API key from ``leadmail keys create``, the provider stand-in in its own process, and each
server as ONE process started the production way (``leadmail serve`` for leadmail, the
uvicorn command for the ceilings and the FastAPI peer: uvloop, httptools, no access log),
pinned to one core with taskset; wrk pinned to the other. Every scenario is warmed up
before each measured run and measured ``--repeats`` times, in interleaved rounds (A, B,
leadmail, peer, then again), so slow drift of the machine hits every scenario alike. The
median run is reported. The table goes to stdout, progress to stderr, everything to
bench/results/latest.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx

from bench import instructions
from bench.bodies import lead_body
from bench.measure import (
    CpuShares,
    CpuWindow,
    LoadError,
    LoadResult,
    PinnedPostgres,
    parse_pgbench,
    parse_wrk,
    rss_mb,
    run_load,
    wait_idle,
)
from bench.profile import render as render_profile
from bench.profile import summarize
from bench.report import render
from leadmail.config import Settings

ROOT = Path(__file__).resolve().parent.parent
WRK_DIR = ROOT / "bench" / "wrk"
PGBENCH_SCRIPT = ROOT / "bench" / "pgbench" / "insert.sql"
RESULTS = ROOT / "bench" / "results" / "latest.json"
BIN = Path(sys.executable).parent

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
PROVIDER_KEY = "re_bench_standin_key"
SENDER = "Bench Academy <hello@bench.example.com>"
TEMPLATE_ID = "welcome"
TEMPLATE_VARIABLES = {
    "first_name": "friend",
    "school_name": "Bench Academy",
    "courses_link": "https://bench.example.com/courses",
    "contact_email": "hello@bench.example.com",
}
RECIPIENTS = 50  # per template request (bench/wrk/email_template.lua agrees)
BATCH_REQUESTS = 20  # x RECIPIENTS = the 1,000 template emails
PUT_LEADS = 1000  # leads created up front for scenario 4
EMAIL_CONCURRENCY = Settings().email_concurrency  # the default, for the batch's floor
READY_TIMEOUT_S = 30.0
BULK_MIN_DURATION_S = 8


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# What is run.


@dataclass(frozen=True)
class Options:
    duration: int
    warmup: int
    repeats: int
    connections: int
    bulk_connections: int
    threads: int
    wrk_timeout: int
    provider_latency: float
    server_cpu: int
    load_cpu: int
    postgres_cpu: int | None
    postgres_url: str
    only: frozenset[str]
    profile: frozenset[str]
    output: Path
    quick: bool


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    server: str  # a key of SERVERS
    method: str
    path: str
    script: str  # in bench/wrk/
    probe_body: Callable[[str], dict[str, Any]] | None = None
    # A bulk send holds RECIPIENTS delivery slots per request: it runs with
    # --bulk-connections, and at least BULK_MIN_DURATION_S so that requests complete.
    bulk: bool = False


def send_body(token: str) -> dict[str, Any]:
    return {
        "to": f"Bench Student <student-{token}@example.com>",
        "from": SENDER,
        "subject": "Your place is saved",
        "html": "<p>See you on Monday!</p>",
    }


def template_body(token: str) -> dict[str, Any]:
    return {
        "to": [f"student-{token}-{i}@example.com" for i in range(1, RECIPIENTS + 1)],
        "template_id": TEMPLATE_ID,
        "from": SENDER,
        "variables": TEMPLATE_VARIABLES,
    }


def note_body(token: str) -> dict[str, Any]:
    return {"note": f"Updated {token}"}


SCENARIOS = [
    Scenario("1", "ceiling A: bare Litestar, POST JSON", "ceiling_a", "POST", "/echo",
             "lead_post.lua", lead_body),
    Scenario("1g", "ceiling A: bare Litestar, GET JSON", "ceiling_a", "GET", "/hello",
             "get.lua"),
    Scenario("2", "ceiling B: bare Litestar + asyncpg INSERT", "ceiling_b", "POST", "/leads",
             "lead_post.lua", lead_body),
    Scenario("3", "POST /api/v1/leads", "leadmail", "POST", "/api/v1/leads",
             "lead_post.lua", lead_body),
    Scenario("4", "PUT /api/v1/leads/{id}", "leadmail", "PUT", "/api/v1/leads/{id}",
             "lead_put.lua", note_body),
    Scenario("5", "GET /api/v1/email/templates", "leadmail", "GET",
             "/api/v1/email/templates", "get.lua"),
    Scenario("6", "POST /api/v1/email/send", "leadmail", "POST", "/api/v1/email/send",
             "email_send.lua", send_body),
    Scenario("7", "POST /api/v1/email/template x50", "leadmail", "POST",
             "/api/v1/email/template", "email_template.lua", template_body, bulk=True),
    Scenario("8", "peer: FastAPI+SQLAlchemy POST /leads", "peer", "POST", "/api/v1/leads",
             "lead_post.lua", lead_body),
]  # fmt: skip
PGBENCH_ID = "9"
PGBENCH_TITLE = "pgbench: one-row INSERT, 8 clients"
BATCH_ID = "E"  # the 1,000 template emails
INSTR_ID = "I"  # instructions per POST /leads, ceiling B and leadmail, under callgrind


# Processes.


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
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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


def start_standin(opts: Options, env: dict[str, str], log_file: TextIO) -> Standin:
    argv = [
        "taskset", "-c", str(opts.load_cpu), sys.executable, "-m", "bench.standin",
        "--latency", str(opts.provider_latency), "--api-key", PROVIDER_KEY,
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


# The database.


def database_url(server_url: str, name: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path="/" + name))


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the server, dropped on exit."""
    name = f"leadmail_bench_{secrets.token_hex(4)}"

    async def admin(sql: str) -> None:
        connection = await asyncpg.connect(server_url, timeout=10)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield database_url(server_url, name)
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        log(f"dropped database {name}")


async def _fetch_value(url: str, sql: str, *args: object) -> Any:
    connection = await asyncpg.connect(url, timeout=10)
    try:
        return await connection.fetchval(sql, *args)
    finally:
        await connection.close()


def leadmail_cli(args: list[str], env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(BIN / "leadmail"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"leadmail {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return result.stdout


# HTTP set-up and probes.


def create_leads(server: Server, key: str, count: int, run_id: str) -> list[str]:
    async def create() -> list[str]:
        limits = httpx.Limits(max_connections=16)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(
            base_url=server.url, headers=headers, limits=limits, timeout=30
        ) as client:
            slots = asyncio.Semaphore(16)

            async def one(i: int) -> str:
                async with slots:
                    response = await client.post(
                        "/api/v1/leads", json=lead_body(f"put-{run_id}-{i}")
                    )
                response.raise_for_status()
                return str(response.json()["data"]["lead_id"])

            return await asyncio.gather(*(one(i) for i in range(count)))

    return asyncio.run(create())


def probe(scenario: Scenario, server: Server, key: str, lead_id: str) -> str | None:
    """One request shaped like the scenario's: None if it is answered 200, else why not."""
    path = scenario.path.replace("{id}", lead_id)
    body = scenario.probe_body(f"probe-{secrets.token_hex(4)}") if scenario.probe_body else None
    try:
        response = httpx.request(
            scenario.method,
            server.url + path,
            json=body,
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
    except httpx.HTTPError as e:
        return f"{scenario.method} {path}: {e!r}"
    if response.status_code != 200:
        return f"{scenario.method} {path} answered {response.status_code}: {response.text[:500]}"
    return None


# Measuring.


@dataclass
class Bench:
    """What every measurement needs: the options, the key, the processes, the database."""

    opts: Options
    key: str
    account_id: str
    db_url: str
    standin: Standin
    servers: dict[str, Server]
    tmp: Path
    lead_ids_file: Path | None = None

    @property
    def db_name(self) -> str:
        return urlsplit(self.db_url).path[1:]

    def wrk_argv(self, scenario: Scenario, url: str, seconds: int, args: list[str]) -> list[str]:
        opts = self.opts
        connections = opts.bulk_connections if scenario.bulk else opts.connections
        return [
            "taskset", "-c", str(opts.load_cpu),
            "wrk", f"-t{min(opts.threads, connections)}", f"-c{connections}",
            f"-d{seconds}s", "--latency", "--timeout", f"{opts.wrk_timeout}s",
            "-s", str(WRK_DIR / scenario.script), url, "--", *args,
        ]  # fmt: skip

    def measure(self, scenario: Scenario, profile_to: Path | None = None) -> LoadResult:
        """Warm up, let the server go idle, then one measured wrk run; with ``profile_to``,
        py-spy samples the server during the run (which slows it: not a measurement)."""
        server = self.servers[scenario.server]
        url = server.url + ("" if "{" in scenario.path else scenario.path)
        key = self.key if server.name in ("leadmail", "peer") else "-"
        extra = str(self.lead_ids_file) if "{id}" in scenario.path else ""
        duration = max(self.opts.duration, BULK_MIN_DURATION_S if scenario.bulk else 0)
        timeout = duration + self.opts.wrk_timeout + 60

        wait_idle(server.pid)
        if self.opts.warmup:
            args = [key, "w" + secrets.token_hex(4), extra]
            run_load(self.wrk_argv(scenario, url, self.opts.warmup, args), timeout=timeout)
            # What the warm-up left in flight (template sends) must not spill into the run.
            wait_idle(server.pid)
        argv = self.wrk_argv(scenario, url, duration, [key, "m" + secrets.token_hex(4), extra])
        profiler = None
        if profile_to is not None:
            profiler = subprocess.Popen(
                [str(BIN / "py-spy"), "record", "--pid", str(server.pid), "--format", "raw",
                 "--output", str(profile_to), "--duration", str(duration), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        try:
            with CpuWindow(server.pid, self.standin.pid, self.db_name) as window:
                output = run_load(argv, timeout=timeout)
        except BaseException:
            if profiler is not None:
                profiler.kill()
                profiler.wait()
            raise
        if profiler is not None:
            _, errors = profiler.communicate(timeout=60)
            if profiler.returncode != 0:
                raise LoadError(f"py-spy failed: {errors[-1000:]}")
        result = parse_wrk(output)
        result.shares = window.shares
        result.rss_mb = rss_mb(server.pid)
        return result

    def pgbench(self) -> LoadResult:
        # Postgres' own limit: pgbench and Postgres may use every core.
        cpus = ",".join(str(c) for c in range(os.cpu_count() or 1))

        def argv(seconds: int, log_prefix: Path | None) -> list[str]:
            logging = ["-l", f"--log-prefix={log_prefix}"] if log_prefix else []
            return [
                "taskset", "-c", cpus,
                "pgbench", "-n", "-M", "prepared", "-c", "8", "-j", "2", "-T", str(seconds),
                "-D", f"account={self.account_id}", "-f", str(PGBENCH_SCRIPT), *logging,
                self.db_url,
            ]  # fmt: skip

        timeout = self.opts.duration + 120
        if self.opts.warmup:
            run_load(argv(self.opts.warmup, None), timeout=timeout)
        logs = self.tmp / f"pgbench-{secrets.token_hex(4)}"
        logs.mkdir()
        with CpuWindow(None, None, self.db_name) as window:
            output = run_load(argv(self.opts.duration, logs / "tx"), timeout=timeout)
        result = parse_pgbench(output, sorted(logs.iterdir()))
        shutil.rmtree(logs)
        result.shares = window.shares
        return result

    def email_batch(self) -> dict[str, Any]:
        """20 concurrent template requests of 50 recipients: 1,000 emails. Seconds from
        the first request sent to the last answer, and what was answered."""
        server = self.servers["leadmail"]

        async def batch() -> tuple[float, list[httpx.Response]]:
            limits = httpx.Limits(max_connections=BATCH_REQUESTS)
            headers = {"Authorization": f"Bearer {self.key}"}
            token = secrets.token_hex(4)
            bodies = [template_body(f"batch-{token}-{i}") for i in range(BATCH_REQUESTS)]
            async with httpx.AsyncClient(
                base_url=server.url, headers=headers, limits=limits, timeout=60
            ) as client:
                started = time.perf_counter()
                responses = await asyncio.gather(
                    *(client.post("/api/v1/email/template", json=body) for body in bodies)
                )
                return time.perf_counter() - started, responses

        wait_idle(server.pid)
        with CpuWindow(server.pid, self.standin.pid, self.db_name) as window:
            seconds, responses = asyncio.run(batch())
        sent = 0
        for response in responses:
            if response.status_code == 200:
                messages = response.json()["data"]["messages"]
                sent += sum(1 for m in messages if m["status"] == "sent")
        return {
            "seconds": seconds,
            "sent": sent,
            "failed_requests": sum(1 for r in responses if r.status_code != 200),
            "server_cpu_percent": round(window.shares.server, 1),
        }


# The run.


def parse_args(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs, 1 s warm-up, 1 repeat")
    parser.add_argument("--duration", type=int, help="seconds per measured run (10)")
    parser.add_argument("--warmup", type=int, help="seconds of warm-up before each run (3)")
    parser.add_argument("--repeats", type=int, help="measured runs per scenario (3)")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (64)")
    parser.add_argument(
        "--bulk-connections",
        type=int,
        default=4,
        help="wrk connections for the 50-recipient template scenario (4: 200 messages in"
        " flight, four times the server's delivery slots)",
    )
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (1)")
    parser.add_argument("--wrk-timeout", type=int, default=30, help="wrk request timeout, s")
    parser.add_argument(
        "--provider-latency", type=float, default=0.05, help="stand-in latency, s (0.05)"
    )
    parser.add_argument("--server-cpu", type=int, default=0, help="core for the server (0)")
    parser.add_argument("--load-cpu", type=int, default=1, help="core for wrk (1)")
    parser.add_argument(
        "--postgres-cpu",
        default="load",
        help="core to pin the local Postgres' processes to for the run, 'load' for wrk's"
        " (default: the server keeps its core to itself), or 'none' to leave them floating",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", DEFAULT_POSTGRES_URL),
        help="a server where the run may create a database (BENCH_POSTGRES_URL)",
    )
    parser.add_argument(
        "--only",
        default="",
        help=f"comma list of scenario ids ({', '.join(s.id for s in SCENARIOS)},"
        f" {PGBENCH_ID}, {BATCH_ID} for the 1,000 emails, {INSTR_ID} for instructions per"
        " request); default all",
    )
    parser.add_argument(
        "--profile",
        default="",
        help="comma list of scenario ids to profile with py-spy in an extra, unmeasured run;"
        " the samples go to profile-<id>.txt beside the JSON",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the JSON goes")
    args = parser.parse_args(argv)
    duration = args.duration or (2 if args.quick else 10)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    repeats = args.repeats or (1 if args.quick else 3)
    if duration < 1 or repeats < 1 or warmup < 0 or args.connections < args.threads:
        parser.error("--duration, --repeats >= 1; --warmup >= 0; --connections >= --threads")
    if args.postgres_cpu not in ("load", "none") and not args.postgres_cpu.isdigit():
        parser.error("--postgres-cpu takes a core number, 'load' or 'none'")
    postgres_cpu = {"load": args.load_cpu, "none": None}.get(args.postgres_cpu)
    if postgres_cpu is None and args.postgres_cpu.isdigit():
        postgres_cpu = int(args.postgres_cpu)
    only = frozenset(s.strip() for s in args.only.split(",") if s.strip())
    profile = frozenset(s.strip() for s in args.profile.split(",") if s.strip())
    known = {s.id for s in SCENARIOS} | {PGBENCH_ID, BATCH_ID, INSTR_ID}
    if not only | profile <= known:
        parser.error(f"unknown scenario id(s): {', '.join(sorted((only | profile) - known))}")
    return Options(
        duration=duration,
        warmup=warmup,
        repeats=repeats,
        connections=args.connections,
        bulk_connections=args.bulk_connections,
        threads=args.threads,
        wrk_timeout=args.wrk_timeout,
        provider_latency=args.provider_latency,
        server_cpu=args.server_cpu,
        load_cpu=args.load_cpu,
        postgres_cpu=postgres_cpu,
        postgres_url=args.postgres_url,
        only=only,
        profile=profile,
        output=args.output,
        quick=args.quick,
    )


def preflight(opts: Options) -> list[str]:
    """Stops on what makes the run impossible; returns warnings for what weakens it."""
    missing = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"bench: {' and '.join(missing)} not found (make bench installs wrk)")
    cpus = os.sched_getaffinity(0)
    if not {opts.server_cpu, opts.load_cpu} <= cpus or opts.server_cpu == opts.load_cpu:
        sys.exit(
            f"bench: needs two distinct cores for the server and wrk; this process may use"
            f" {sorted(cpus)} (see --server-cpu, --load-cpu)"
        )
    notes = []
    if len(cpus) > 2:
        notes.append(f"{len(cpus)} cores: other processes float over all of them")
    if shutil.which("pgbench") is None:
        notes.append("pgbench not found: scenario 9 skipped (Debian: postgresql-15 ships it)")
    return notes


def selected(opts: Options, scenario_id: str) -> bool:
    return not opts.only or scenario_id in opts.only


def build_servers(
    opts: Options, env: dict[str, str], db_url: str, account_id: str, standin_url: str, tmp: Path
) -> dict[str, Server]:
    def uvicorn(app: str, port: int) -> list[str]:
        return [
            str(BIN / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(port),
            "--loop", "uvloop", "--http", "httptools", "--lifespan", "on",
            "--no-access-log", "--no-server-header", "--log-level", "warning",
        ]  # fmt: skip

    bare_env = {**env, "BENCH_DATABASE_URL": db_url, "BENCH_ACCOUNT_ID": account_id}
    ours_env = {
        **env,
        "LEADMAIL_DATABASE_URL": db_url,
        "LEADMAIL_LOG_FORMAT": "json",
        "LEADMAIL_EMAIL_PROVIDER": "resend",
        "LEADMAIL_EMAIL_API_KEY": PROVIDER_KEY,
        "LEADMAIL_EMAIL_BASE_URL": standin_url,
    }
    specs = {
        "ceiling_a": ("bare Litestar (ceiling A)", "bench.ceilings:json_app", bare_env),
        "ceiling_b": ("bare Litestar + asyncpg (ceiling B)", "bench.ceilings:insert_app",
                      bare_env),
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
        servers[name] = Server(
            name, title, argv, server_env, tmp / f"{name}.log", opts.server_cpu, port
        )
    return servers


def count_instructions(servers: dict[str, Server], key: str, tmp: Path, cpu: int) -> dict[str, int]:
    """Instructions per POST /leads of ceiling B and of leadmail (bench/instructions.py),
    with the settings their servers run with."""
    counted = {}
    for name in instructions.APPS:
        env = {**servers[name].env, "BENCH_API_KEY": key}
        log(f"{INSTR_ID} counting instructions per POST /leads of {name} under callgrind")
        counted[name] = instructions.count(name, env, tmp / f"callgrind-{name}.log", cpu)
        log(f"{INSTR_ID} {name}: {counted[name]:,} instructions per request")
    return counted


def median_result(runs: list[LoadResult]) -> dict[str, Any]:
    def med(values: list[float]) -> float:
        return float(statistics.median(values))

    shares = [r.shares for r in runs if r.shares is not None]
    cpu = None
    if shares:
        cores = tuple(med([s.cores[i] for s in shares]) for i in range(len(shares[0].cores)))
        cpu = CpuShares(
            server=med([s.server for s in shares]),
            load=med([s.load for s in shares]),
            standin=med([s.standin for s in shares]),
            postgres=med([s.postgres for s in shares]),
            interrupts=med([s.interrupts for s in shares]),
            cores=cores,
        ).as_dict()
    rss = [r.rss_mb for r in runs if r.rss_mb is not None]
    # Server CPU per request: comparable even where the server did not saturate its core.
    per_request = [
        10_000 * r.shares.server / r.rps for r in runs if r.shares and r.shares.server and r.rps
    ]
    return {
        "rps": round(med([r.rps for r in runs]), 2),
        "server_cpu_us_per_request": round(med(per_request)) if per_request else None,
        "p50_ms": round(med([r.p50_ms for r in runs]), 2),
        "p99_ms": round(med([r.p99_ms for r in runs]), 2),
        "errors": sum(r.errors for r in runs),  # all runs: one error is worth seeing
        "requests": sum(r.requests for r in runs),
        "server_rss_mb": round(rss[-1], 1) if rss else None,  # after the last run
        "cpu_percent": cpu,
    }


def count_error_logs(path: Path) -> int:
    """Lines at level error or above in a JSON log (leadmail's)."""
    count = 0
    with contextlib.suppress(OSError), path.open(errors="replace") as lines:
        for line in lines:
            if '"level"' not in line:
                continue
            with contextlib.suppress(ValueError):
                if json.loads(line).get("level") in ("error", "critical", "exception"):
                    count += 1
    return count


def package_versions() -> dict[str, str]:
    names = [
        "leadmail", "litestar", "msgspec", "piccolo", "asyncpg", "structlog", "httpx",
        "uvicorn", "uvloop", "httptools", "fastapi", "starlette", "pydantic", "sqlalchemy",
    ]  # fmt: skip
    found = {}
    for name in names:
        with contextlib.suppress(PackageNotFoundError):
            found[name] = version(name)
    found["python"] = platform.python_version()
    return found


def tool_version(argv: list[str]) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        text = (result.stdout or result.stderr).strip()
        return text.splitlines()[0] if text else ""
    return ""


def git_state() -> dict[str, Any]:
    """The commit, and the files changed since, outside bench/: the code the servers run
    (read at the start, since the work tree may change while the run goes on)."""

    def git(*args: str) -> str:
        result = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        )
        return result.stdout.rstrip()

    changed = [line[3:] for line in git("status", "--porcelain", "--", ".", ":!bench").splitlines()]
    return {"commit": git("rev-parse", "--short", "HEAD"), "dirty": bool(changed),
            "changed": changed[:20]}  # fmt: skip


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(opts: Options) -> dict[str, Any]:
    notes = preflight(opts)
    # The driver itself (probes, the 1,000-email batch) stays off the server's core.
    os.sched_setaffinity(0, {opts.load_cpu})
    started_at = datetime.now(UTC)
    git = git_state()
    env = child_env()
    scenarios = [s for s in SCENARIOS if selected(opts, s.id)]
    runs: dict[str, list[LoadResult]] = {s.id: [] for s in scenarios}
    failures: dict[str, str] = {}
    batches: list[dict[str, Any]] = []
    pg_runs: list[LoadResult] = []
    counted: dict[str, int] = {}
    profiles: dict[str, Any] = {}
    server_facts: dict[str, Any] = {}
    standin_requests: int | None = None

    local = urlsplit(opts.postgres_url).hostname in (None, "", "127.0.0.1", "localhost", "::1")
    with (
        PinnedPostgres(opts.postgres_cpu if local else None) as pinned,
        tempfile.TemporaryDirectory(prefix="leadmail-bench-") as tmp_name,
        fresh_database(opts.postgres_url) as db_url,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmp_name)
        if pinned.note:
            notes.append(pinned.note)
        elif pinned.pinned:
            log(f"Postgres pinned to cpu {opts.postgres_cpu} for the run")
        log(f"database {urlsplit(db_url).path[1:]}: migrating, creating a key")
        cli_env = {**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_FORMAT": "json"}
        leadmail_cli(["migrate"], cli_env)
        created = leadmail_cli(
            ["keys", "create", "--account", "bench", "--label", "bench"], cli_env
        )
        key = created.strip().splitlines()[-1]
        account_id = asyncio.run(
            _fetch_value(db_url, "SELECT account_id FROM accounts WHERE name = $1", "bench")
        )
        postgres_version = asyncio.run(_fetch_value(db_url, "SHOW server_version"))

        standin_log = stack.enter_context((tmp / "standin.log").open("w"))
        standin = start_standin(opts, env, standin_log)

        def stop_standin() -> None:
            nonlocal standin_requests
            standin_requests = standin.stop()

        stack.callback(stop_standin)
        log(f"provider stand-in on {standin.url}, latency {opts.provider_latency * 1000:g} ms")

        wanted = {s.server for s in scenarios} | (
            {"leadmail"} if selected(opts, BATCH_ID) else set()
        )
        servers = {}
        every_server = build_servers(opts, env, db_url, account_id, standin.url, tmp)
        for name, server in every_server.items():
            if name in wanted:
                server.start()
                stack.callback(server.stop)
                server.wait_ready()
                servers[name] = server
                log(f"{server.title}: pid {server.pid} on cpu {opts.server_cpu}, {server.url}")
        bench = Bench(opts, key, account_id, db_url, standin, servers, tmp)

        lead_ids = ["ld_none"]
        if any("{id}" in s.path for s in scenarios):
            lead_ids = create_leads(servers["leadmail"], key, PUT_LEADS, secrets.token_hex(4))
            bench.lead_ids_file = tmp / "lead_ids.txt"
            bench.lead_ids_file.write_text("\n".join(lead_ids) + "\n")
            log(f"created {len(lead_ids)} leads for the PUT scenario")

        for scenario in scenarios:
            problem = probe(scenario, servers[scenario.server], key, lead_ids[0])
            if problem is not None:
                log_tail = servers[scenario.server].log_tail(15)
                failures[scenario.id] = f"{problem}\n--- server log ---\n{log_tail}"
                log(f"scenario {scenario.id} skipped: {problem}")

        # Interleaved rounds: every scenario once, then again, so drift hits all alike.
        for round_no in range(1, opts.repeats + 1):
            for scenario in scenarios:
                if scenario.id in failures:
                    continue
                try:
                    result = bench.measure(scenario)
                except (LoadError, OSError, subprocess.SubprocessError) as e:
                    failures[scenario.id] = str(e)[:2000]
                    log(f"scenario {scenario.id} failed: {e}")
                    continue
                runs[scenario.id].append(result)
                log(progress(round_no, opts.repeats, scenario.id, scenario.title, result))

        for scenario in scenarios:
            if scenario.id not in opts.profile or scenario.id in failures:
                continue
            target = opts.output.parent / f"profile-{scenario.id}.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                result = bench.measure(scenario, profile_to=target)
            except (LoadError, OSError, subprocess.SubprocessError) as e:
                log(f"profiling {scenario.id} failed: {e}")
                continue
            summary = summarize(target.read_text())
            profiles[scenario.id] = {
                "file": _relative([str(target)])[0],
                "rps_while_profiled": round(result.rps, 1),
                **summary,
            }
            log(render_profile(summary, f"{scenario.id} {scenario.title}"))

        if selected(opts, BATCH_ID):
            bench.email_batch()  # warm-up: connections to the stand-in, caches
            for i in range(1, opts.repeats + 1):
                batch = bench.email_batch()
                batches.append(batch)
                log(
                    f"[{i}/{opts.repeats}] {BATCH_ID} 1,000 template emails:"
                    f" {batch['seconds']:.2f} s, {batch['sent']} sent,"
                    f" {batch['failed_requests']} failed requests,"
                    f" server cpu {batch['server_cpu_percent']:.0f}%"
                )

        if selected(opts, INSTR_ID):
            if instructions.available():
                counted = count_instructions(every_server, key, tmp, opts.load_cpu)
            else:
                notes.append("valgrind not found: instructions per request (I) skipped")

        if selected(opts, PGBENCH_ID) and shutil.which("pgbench"):
            for i in range(1, opts.repeats + 1):
                try:
                    result = bench.pgbench()
                except (LoadError, OSError, subprocess.SubprocessError) as e:
                    failures[PGBENCH_ID] = str(e)[:2000]
                    log(f"pgbench failed: {e}")
                    break
                pg_runs.append(result)
                log(progress(i, opts.repeats, PGBENCH_ID, PGBENCH_TITLE, result))

        for name, server in servers.items():
            alive = server.process is not None and server.process.poll() is None
            server_facts[name] = {
                "title": server.title,
                "argv": ["taskset", "-c", str(server.cpu), *_relative(server.argv)],
                "modules": server.modules,
                "rss_mb_after": round(rss_mb(server.pid), 1) if alive else None,
                "error_log_lines": (
                    count_error_logs(server.log_path) if name == "leadmail" else None
                ),
            }
        rows = db_count(db_url)

    finished_at = datetime.now(UTC)
    return assemble(
        opts=opts,
        scenarios=scenarios,
        runs=runs,
        failures=failures,
        pg_runs=pg_runs,
        counted=counted,
        batches=batches,
        profiles=profiles,
        meta={
            "started_at": started_at.isoformat(timespec="seconds"),
            "finished_at": finished_at.isoformat(timespec="seconds"),
            "git": git,
            "machine": {
                "cpus": os.cpu_count(),
                "cpu_model": cpu_model(),
                "kernel": platform.release(),
                "postgres": postgres_version,
                "wrk": tool_version(["wrk", "-v"]),
                "pgbench": tool_version(["pgbench", "--version"]),
            },
            "versions": package_versions(),
            "settings": {
                "duration_s": opts.duration,
                "warmup_s": opts.warmup,
                "repeats": opts.repeats,
                "connections": opts.connections,
                "bulk_connections": opts.bulk_connections,
                "bulk_min_duration_s": BULK_MIN_DURATION_S,
                "wrk_threads": opts.threads,
                "wrk_timeout_s": opts.wrk_timeout,
                "provider_latency_ms": round(opts.provider_latency * 1000, 1),
                "server_cpu": opts.server_cpu,
                "load_cpu": opts.load_cpu,
                "postgres_cpu": opts.postgres_cpu if pinned.pinned else None,
                "quick": opts.quick,
            },
            "servers": server_facts,
            "standin_requests": standin_requests,
            "rows_written": rows,
            "notes": notes,
        },
    )


def _relative(argv: list[str]) -> list[str]:
    return [str(Path(a).relative_to(ROOT)) if a.startswith(str(ROOT)) else a for a in argv]


def db_count(db_url: str) -> dict[str, int]:
    async def count() -> dict[str, int]:
        connection = await asyncpg.connect(db_url, timeout=10)
        try:
            return {
                table: int(await connection.fetchval(f"SELECT count(*) FROM {table}"))  # noqa: S608
                for table in ("leads", "email_messages")
            }
        finally:
            await connection.close()

    return asyncio.run(count())


def progress(round_no: int, repeats: int, sid: str, title: str, result: LoadResult) -> str:
    shares = result.shares
    cpu = (
        f" | cpu: server {shares.server:.0f}%, load {shares.load:.0f}%, pg {shares.postgres:.0f}%"
        if shares
        else ""
    )
    return (
        f"[{round_no}/{repeats}] {sid:>2} {title}: {result.rps:,.0f}/s,"
        f" p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, errors {result.errors}{cpu}"
    )


def assemble(
    *,
    opts: Options,
    scenarios: list[Scenario],
    runs: dict[str, list[LoadResult]],
    failures: dict[str, str],
    pg_runs: list[LoadResult],
    counted: dict[str, int],
    batches: list[dict[str, Any]],
    profiles: dict[str, Any],
    meta: dict[str, Any],
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for s in scenarios:
        rows.append(
            {
                "id": s.id,
                "title": s.title,
                "server": s.server,
                "request": f"{s.method} {s.path}",
                "connections": opts.bulk_connections if s.bulk else opts.connections,
                "messages_per_request": RECIPIENTS if s.bulk else None,
                "median": median_result(runs[s.id]) if runs[s.id] else None,
                "runs": [r.as_dict() for r in runs[s.id]],
                "error": failures.get(s.id),
                "profile": profiles.get(s.id),
            }
        )
    if selected(opts, PGBENCH_ID):
        rows.append(
            {
                "id": PGBENCH_ID,
                "title": PGBENCH_TITLE,
                "server": "postgres",
                "request": "pgbench -n -M prepared -c 8 -j 2 -f bench/pgbench/insert.sql",
                "median": median_result(pg_runs) if pg_runs else None,
                "runs": [r.as_dict() for r in pg_runs],
                "error": failures.get(PGBENCH_ID),
            }
        )
    batch = None
    if batches:
        seconds = [b["seconds"] for b in batches]
        batch = {
            "emails": BATCH_REQUESTS * RECIPIENTS,
            "requests": BATCH_REQUESTS,
            "recipients_per_request": RECIPIENTS,
            "provider_latency_ms": meta["settings"]["provider_latency_ms"],
            # Each message holds one of LEADMAIL_EMAIL_CONCURRENCY slots for one latency.
            "floor_s": round(
                BATCH_REQUESTS * RECIPIENTS / EMAIL_CONCURRENCY * opts.provider_latency, 3
            ),
            "median_s": round(statistics.median(seconds), 3),
            "runs_s": [round(s, 3) for s in seconds],
            "sent": [b["sent"] for b in batches],
            "failed_requests": sum(b["failed_requests"] for b in batches),
        }
    instr = None
    if counted:
        instr = {
            "requests_counted": instructions.REQUESTS,
            "in_flight": instructions.CONCURRENCY,
            "per_request": counted,
            "ratio_3_2": round(counted["ceiling_b"] / counted["leadmail"], 3),
        }
    report = {"meta": meta, "scenarios": rows, "email_batch": batch, "instructions": instr}
    report["checks"] = checks(report)
    return report


def checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's ratios and targets. ``met`` is None where there is no target, or no
    figure to judge."""
    medians = {row["id"]: row["median"] for row in report["scenarios"] if row["median"]}

    def rps(sid: str) -> float | None:
        return medians[sid]["rps"] if sid in medians else None

    def ratio(a: str, b: str) -> float | None:
        x, y = rps(a), rps(b)
        return round(x / y, 3) if x is not None and y else None

    def judged(value: float | None, target: float | None, higher: bool) -> bool | None:
        if value is None or target is None:
            return None
        return value >= target if higher else value <= target

    out: list[dict[str, Any]] = []

    def add(
        cid: str, title: str, value: float | None, unit: str, target: float | None, higher: bool
    ) -> None:
        sign = ">=" if higher else "<="
        out.append(
            {
                "id": cid,
                "title": title,
                "value": value,
                "unit": unit,
                "target": None if target is None else f"{sign} {target:g}{unit}",
                "met": judged(value, target, higher),
            }
        )

    add("(3)/(2)", "POST /leads vs the bare insert", ratio("3", "2"), "x", 0.75, True)

    def cpu_ratio(a: str, b: str) -> float | None:
        x, y = (medians.get(i, {}).get("server_cpu_us_per_request") for i in (a, b))
        return round(y / x, 3) if x and y else None

    # The same, had each server its core to itself (Postgres shares it in (2)).
    add("(3)/(2) CPU", "the same, by server CPU per request", cpu_ratio("3", "2"), "x", None, True)
    counted = report.get("instructions")
    add(
        "(3)/(2) instr",
        "the same, by instructions per request (callgrind)",
        counted["ratio_3_2"] if counted else None,
        "x",
        None,
        True,
    )
    add("(3)/(8)", "POST /leads vs the FastAPI peer", ratio("3", "8"), "x", 1.5, True)
    add("(2)/(9)", "the bare insert vs pgbench", ratio("2", "9"), "x", None, True)
    add("(6)/(1)", "email send vs the bare JSON echo", ratio("6", "1"), "x", None, True)
    p99 = medians["3"]["p99_ms"] if "3" in medians else None
    connections = report["meta"]["settings"]["connections"]
    add(f"p99 (3) @{connections}", "p99 of POST /leads", p99, " ms", 100.0, False)
    batch = report["email_batch"]
    seconds = batch["median_s"] if batch else None
    add("1,000 emails", "1,000 template emails via the stand-in", seconds, " s", 3.0, False)
    ours = report["meta"]["servers"].get("leadmail", {})
    add("RSS", "leadmail's RSS after the run", ours.get("rss_mb_after"), " MB", 150.0, False)
    return out


def write_json(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(report, indent=2) + "\n")
    partial.replace(path)


def _interrupted(signum: int, _: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    # Stopped by a signal, the run still stops its servers and drops its database. SIGINT
    # too: a shell starting the run in the background would have it ignored.
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    try:
        report = run(opts)
    except KeyboardInterrupt:
        log("bench: interrupted; servers stopped, database dropped")
        return 130
    print(render(report))
    write_json(report, opts.output)
    shown = opts.output.relative_to(ROOT) if opts.output.is_relative_to(ROOT) else opts.output
    log(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
