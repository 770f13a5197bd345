"""First start on the embedded default: an empty SQLite file gets a demo key, once; a later
start says how to make another, as a command that works when pasted."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.e2e.cli import cli_env, run_cli, run_command_line
from tests.e2e.names import new_email
from tests.e2e.server import running_server, wait_for_stdout
from tests.support.envelope import LEADS, ok_data

_BEARER = re.compile(r"Bearer ([^\s'\"]+)")


def test_first_start_prints_a_working_demo_key_once(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    email = new_email("demo")

    with running_server(database_url, tmp_path, name="first") as first:
        out = wait_for_stdout(first, "curl")
        secrets = set(_BEARER.findall(out))
        assert len(secrets) == 1, out
        [secret] = secrets
        assert secret in [line.strip() for line in out.splitlines()], "key not on its own line"
        assert re.search(r"\bdemo\b", out), out  # the account's name
        assert f"http://127.0.0.1:{first.port}/api/v1/leads" in out, out
        # The dashboard's address, and the command that makes a first user, as pasted.
        out = wait_for_stdout(first, "users create")
        assert f"The dashboard is at http://127.0.0.1:{first.port}/app/ ." in out, out
        [make_user] = [line.strip() for line in out.splitlines() if "users create" in line]
        assert shlex.split(make_user)[1:] == [
            "users",
            "create",
            "--account",
            "demo",
            "--email",
            "you@example.com",
        ], make_user
        invited = run_command_line(make_user, cli_env(database_url), tmp_path)
        assert invited.returncode == 0, invited.describe()
        assert "/app/password/" in invited.stdout.splitlines()[-1]

        with first.client(secret) as api:
            lead = ok_data(api.post(LEADS, json={"name": "Ada Lovelace", "email": email}))
        assert secret not in first.stderr()
        first.stop_gracefully()

    listing = run_cli(["keys", "list", "--json"], cli_env(database_url), tmp_path)
    assert listing.returncode == 0, listing.describe()
    [key] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert key["account"] == "demo"
    assert secret.startswith(key["prefix"])
    assert key["last_used"] not in ("-", "", None)  # it was used above

    with running_server(database_url, tmp_path, name="second") as second:
        with second.client(secret) as api:
            items = ok_data(api.get(LEADS))["items"]
        assert [item["lead_id"] for item in items] == [lead["lead_id"]]
        second.stop_gracefully()
        again = second.stdout()
        assert secret not in again
        assert "Bearer" not in again
    # Nothing but how to make a key, on stdout where the first start showed one.
    said, command = [line.strip() for line in again.splitlines() if line.strip()]
    assert said == "API keys are shown only once, when they are made. To make another:"
    assert shlex.split(command)[1:] == ["keys", "create", "--account", "demo"], command
    made = run_command_line(command, cli_env(database_url), tmp_path)
    assert made.returncode == 0, made.describe()
    assert made.stdout.splitlines()[-1].startswith("lm_")
    listing = run_cli(["keys", "list", "--json"], cli_env(database_url), tmp_path)
    assert [json.loads(line)["account"] for line in listing.stdout.splitlines()] == ["demo"] * 2
