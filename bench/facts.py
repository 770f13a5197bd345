"""What the report says about the run besides its figures: the machine, the versions, the
commit, and each server's facts after the run."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from bench.common import ROOT, relative
from bench.cpu import rss_mb
from bench.servers import Server


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


def machine(postgres_version: str) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": platform.release(),
        "postgres": postgres_version,
        "wrk": tool_version(["wrk", "-v"]),
        "pgbench": tool_version(["pgbench", "--version"]),
    }


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def tool_version(argv: list[str]) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        text = (result.stdout or result.stderr).strip()
        return text.splitlines()[0] if text else ""
    return ""


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


def server_facts(servers: dict[str, Server]) -> dict[str, Any]:
    """How each server was started, what it loaded, its RSS at the end (while it runs)."""
    facts = {}
    for name, server in servers.items():
        alive = server.process is not None and server.process.poll() is None
        facts[name] = {
            "title": server.title,
            "argv": ["taskset", "-c", str(server.cpu), *relative(server.argv)],
            "modules": server.modules,
            "rss_mb_after": round(rss_mb(server.pid), 1) if alive else None,
            "error_log_lines": count_error_logs(server.log_path) if name == "leadmail" else None,
        }
    return facts


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
