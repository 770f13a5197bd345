"""API keys made with ``leadmail keys create``, and reading what that command prints."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.cli import CliResult, cli_env, run_cli, run_cli_parallel

_KEY_ID = re.compile(r"\b(key_[A-Za-z0-9_-]+)")


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
