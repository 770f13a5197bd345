"""A client generated from the live OpenAPI document works, typed, for the README's flows.

The real ``leadmail serve`` (the session's SQLite server, provider ``console``) serves
/schema/openapi.json; openapi-python-client generates ``leadmail_client`` from it into a
temporary folder, told nothing but the package's name, and must print no warning;
tests/e2e/client_flows.py, which drives every flow through that client (a CSV file
imported among them) and reads every answer, errors included, as its typed model, must
pass ``mypy --strict`` against it and then run to the end. The 502 and 503 come from a
second server that sends through the provider stand-in (tests/support/standin.py), told
to refuse and then to be unavailable.

One test, that reports every stage (generation, mypy, the run) at once. About 10 s.

    .venv/bin/pytest tests/e2e/test_generated_client.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.mail import EmailRig, email_rig
from tests.e2e.server import LeadmailServer
from tests.support.tools import require_executable, require_module

PACKAGE = "leadmail_client"
FLOWS = Path(__file__).with_name("client_flows.py")
# Only the package's name: nothing that works around the document (no content type
# overrides), so what a user generates is what is tested.
GENERATOR_CONFIG = f"package_name_override: {PACKAGE}\n"
# The generator's client.py is one fixed template, whatever the document: its __exit__ hands
# `*args: object` on to httpx's typed __exit__, which mypy --strict refuses. Only that
# module's own errors are not reported; the script and the modules made from the document
# are checked in full.
MYPY_CONFIG = """\
[mypy]
strict = True
python_version = 3.11

[mypy-leadmail_client.client]
ignore_errors = True
"""
TIMEOUT_S = 180.0
MAX_ATTEMPTS = 2


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmailRig]:
    """A server sending through Resend at the stand-in, giving up after two attempts."""
    workdir = tmp_path_factory.mktemp("generated-client-failing")
    with email_rig(
        "resend",
        f"sqlite:///{workdir / 'leadmail.db'}",
        workdir,
        name="failing",
        EMAIL_MAX_ATTEMPTS=str(MAX_ATTEMPTS),
        EMAIL_DEADLINE="10",
        EMAIL_TIMEOUT="2",
    ) as rig:
        yield rig


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run a command; its exit code and what it printed (stdout, then stderr)."""
    done = subprocess.run(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def generate(document: Path, workdir: Path) -> list[str]:
    """Generate the client next to ``document``; the problems, if any."""
    generator = require_executable("openapi-python-client")
    config = workdir / "generator.yml"
    config.write_text(GENERATOR_CONFIG)
    # It formats what it writes with ruff, which it finds on PATH: its own environment's.
    env = {**os.environ, "PATH": f"{generator.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = [str(generator), "generate", "--path", str(document), "--meta", "none"]
    args += ["--config", str(config), "--output-path", str(workdir / PACKAGE)]
    code, output = run(args, workdir, env)
    problems = [f"openapi-python-client exited {code}:\n{output}"] if code != 0 else []
    if "warning" in output.lower():
        problems.append(f"openapi-python-client warned:\n{output}")
    if not (workdir / PACKAGE / "__init__.py").exists():
        problems.append(f"no package {PACKAGE} was generated:\n{output}")
    return problems


def type_check(workdir: Path) -> list[str]:
    """mypy --strict on client_flows.py and the generated package it imports."""
    require_module("mypy")
    (workdir / "mypy.ini").write_text(MYPY_CONFIG)
    args = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini"]
    args += ["--cache-dir", str(workdir / ".mypy_cache"), FLOWS.name]
    code, output = run(args, workdir)
    return [] if code == 0 else [f"mypy --strict found errors (exit {code}):\n{output}"]


def run_flows(workdir: Path, server: LeadmailServer, failing: EmailRig) -> list[str]:
    """client_flows.py against the two servers, with the stand-in's failures queued."""
    assert server.primary is not None
    failing.standin.reset()
    failing.standin.fail_next(1, status=422, message="The 'to' address is on a block list.")
    failing.standin.fail_next(MAX_ATTEMPTS, status=503)
    args = [sys.executable, FLOWS.name, server.base_url, server.primary.secret]
    args += [failing.server.base_url, failing.secret]
    code, output = run(args, workdir)
    return [] if code == 0 else [f"client_flows.py exited {code}:\n{output}"]


def test_a_generated_client_runs_the_readme_flows_typed(
    sqlite_server: LeadmailServer, failing: EmailRig, tmp_path: Path
) -> None:
    with httpx.Client(base_url=sqlite_server.base_url, timeout=10.0) as plain:
        response = plain.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    document = tmp_path / "openapi.json"
    document.write_bytes(response.content)
    shutil.copy(FLOWS, tmp_path / FLOWS.name)

    problems = generate(document, tmp_path)
    if (tmp_path / PACKAGE).is_dir():
        problems += type_check(tmp_path)
        problems += run_flows(tmp_path, sqlite_server, failing)

    assert not problems, "\n\n".join(problems)
