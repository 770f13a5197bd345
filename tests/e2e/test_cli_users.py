"""``leadmail users`` as an operator runs it, on a SQLite file: create (the link), list (a
table, or JSON lines), a new link, disable; and the one-line refusals with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import CliResult, cli_env, run_cli
from tests.e2e.names import new_name

LINK_PATH = "/app/password/"


def users(tmp_path: Path, *args: str) -> CliResult:
    return run_cli(["users", *args], cli_env(f"sqlite:///{tmp_path / 'leadmail.db'}"), tmp_path)


def links_in(result: CliResult) -> list[str]:
    return [line for line in result.stdout.splitlines() if LINK_PATH in line]


def test_a_user_is_created_listed_given_a_new_link_and_disabled(tmp_path: Path) -> None:
    account = new_name("school")
    made = run_cli(
        ["keys", "create", "--account", account],
        cli_env(f"sqlite:///{tmp_path / 'leadmail.db'}"),
        tmp_path,
    )
    assert made.returncode == 0, made.describe()

    created = users(tmp_path, "create", "--account", account, "--email", "Ada@Example.com")
    assert created.returncode == 0, created.describe()
    assert f"in account '{account}'" in created.stdout
    [first_link] = links_in(created)

    table = users(tmp_path, "list")
    assert table.returncode == 0, table.describe()
    header, row = table.stdout.splitlines()
    assert header.split() == ["user_id", "account", "email", "state", "created"]
    assert row.split()[1:4] == [account, "Ada@example.com", "invited"]

    again = users(tmp_path, "link", "--email", "ada@example.com")
    assert again.returncode == 0, again.describe()
    [second_link] = links_in(again)
    assert second_link != first_link

    disabled = users(tmp_path, "disable", "--email", "ada@example.com")
    assert disabled.returncode == 0, disabled.describe()
    listed = users(tmp_path, "list", "--json", "--account", account)
    [user] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (user["email"], user["state"]) == ("Ada@example.com", "disabled")


def test_refusals_are_one_line_with_exit_2(tmp_path: Path) -> None:
    account = new_name("school")
    nowhere = users(tmp_path, "create", "--account", account, "--email", "a@example.com")
    assert nowhere.returncode == 2, nowhere.describe()
    assert f"keys create --account {account}" in nowhere.stderr  # how to make the account
    assert len(nowhere.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "leadmail.db").exists()  # no file made by a refusal

    env = cli_env(f"sqlite:///{tmp_path / 'leadmail.db'}")
    assert run_cli(["keys", "create", "--account", account], env, tmp_path).returncode == 0
    assert (
        users(tmp_path, "create", "--account", account, "--email", "a@example.com").returncode == 0
    )
    for args in (
        ("create", "--account", account, "--email", "A@example.com"),  # taken
        ("create", "--account", account, "--email", "not an address"),
        ("link", "--email", "nobody@example.com"),
        ("disable", "--email", "nobody@example.com"),
    ):
        refused = users(tmp_path, *args)
        assert refused.returncode == 2, refused.describe()
        assert len(refused.stderr.strip().splitlines()) == 1, refused.describe()
        assert refused.stderr.startswith("leadmail: "), refused.describe()
