"""The ``leadmail`` command run as an operator runs it: a subprocess with an environment of
its own, alone or several at once."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

CLI_TIMEOUT_S = 60.0
# Signs unsubscribe links of the servers and workers the tests start on Postgres.
TEST_SECRET_KEY = "e2e-unsubscribe-signing-key-0123456789abcdef"


def leadmail_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("leadmail")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "leadmail.cli"]


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
    if not database_url.startswith("sqlite:"):  # `serve` and `worker` require one there
        env["LEADMAIL_SECRET_KEY"] = TEST_SECRET_KEY
    env["LEADMAIL_LOG_FORMAT"] = "json"
    env.update(extra or {})
    return env


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


def run_command_line(line: str, env: Mapping[str, str], cwd: Path) -> CliResult:
    """A command line as the CLI suggested it, run as a user pasting it would (its own
    program: ``leadmail`` on PATH, or the path it was started by)."""
    args = shlex.split(line)
    try:
        done = subprocess.run(
            args,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{line}` did not finish")
    return CliResult(tuple(args[1:]), done.returncode, done.stdout, done.stderr)
