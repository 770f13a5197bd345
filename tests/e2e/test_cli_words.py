"""What ``leadmail leads`` says to someone trying it for the first time: each refusal in one
sentence, and each next step as a command line that works when pasted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import CliResult, cli_env, run_cli, run_command_line
from tests.e2e.keys import issued_key

MAKE_AN_ACCOUNT = ". An account is made with its first key: "
MORE = " more rows not imported; all of them: "


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(f"sqlite:///{tmp_path / 'leadmail.db'}")


def said(result: CliResult) -> list[str]:
    """stderr without its JSON log lines: what the command said."""
    lines = []
    for line in result.stderr.splitlines():
        try:
            json.loads(line)
        except ValueError:
            lines.append(line)
    return lines


def test_an_import_into_a_new_account_says_how_an_account_is_made(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "leads.csv"
    path.write_text("email,name\nada@example.com,Ada\n")
    importing = ["leads", "import", str(path), "--account", "my-school"]

    refused = run_cli(importing, env, tmp_path)

    assert refused.returncode == 2, refused.describe()
    [line] = said(refused)
    reason, _, make = line.partition(MAKE_AN_ACCOUNT)
    assert reason == "leadmail: no account named 'my-school'", line
    issued_key(run_command_line(make, env, tmp_path), "my-school")
    imported = run_cli(importing, env, tmp_path)
    assert imported.returncode == 0, imported.describe()
    assert "1 rows: 1 created" in imported.stdout


def test_a_file_without_an_email_column_is_refused_in_one_sentence(
    env: dict[str, str], tmp_path: Path
) -> None:
    account = issued_key(run_cli(["keys", "create", "--account", "a"], env, tmp_path), "a")
    path = tmp_path / "people.csv"
    path.write_text("name,city\nAda,Leeds\n")

    refused = run_cli(["leads", "import", str(path), "--account", account.account], env, tmp_path)

    assert refused.returncode == 2, refused.describe()
    assert said(refused) == [
        "leadmail: people.csv: cannot import:"
        " `email` is missing from the header row: every file needs this column"
    ]


def test_an_import_ends_with_how_many_more_rows_failed_and_the_command_listing_them(
    env: dict[str, str], tmp_path: Path
) -> None:
    account = issued_key(run_cli(["keys", "create", "--account", "b"], env, tmp_path), "b")
    path = tmp_path / "leads.csv"
    bad = [f"not-an-email-{n},Nobody {n}" for n in range(23)]
    good = [f"lead{n}@example.com,Lead {n}" for n in range(5)]
    twice = ["lead0@example.com,Lead zero again"]  # the first lead0 row is skipped
    path.write_text("\n".join(["email,name", *good, *bad, *twice]) + "\n")

    result = run_cli(["leads", "import", str(path), "--account", account.account], env, tmp_path)

    assert result.returncode == 0, result.describe()
    assert "29 rows: 5 created, 0 updated, 1 skipped, 23 failed." in result.stdout
    lines = [line for line in said(result) if line.startswith(("row ", "..."))]
    shown, [last] = lines[:10], lines[10:]
    assert shown[0] == (
        "row 2 (lead0@example.com): email: row 30 has the same email, and was imported instead"
    )
    assert shown[1].startswith("row 7 (not-an-email-0): email: is not a valid email address")
    count, _, listing = last.removeprefix("... and ").partition(MORE)
    assert count == "14", last  # 24 rows not imported, 10 shown

    every = run_command_line(listing, env, tmp_path)

    assert every.returncode == 0, every.describe()
    rows = every.stdout.splitlines()
    assert rows[:10] == shown
    assert len(rows) == 24
    assert [row.split(":")[0] for row in rows[1:]] == [
        f"row {n} (not-an-email-{n - 7})" for n in range(7, 30)
    ]


def test_import_errors_of_an_unknown_import_or_account_say_so(
    env: dict[str, str], tmp_path: Path
) -> None:
    account = issued_key(run_cli(["keys", "create", "--account", "c"], env, tmp_path), "c")

    unknown = run_cli(["leads", "import-errors", "imp_nope", "--account", "c"], env, tmp_path)
    stranger = run_cli(["leads", "import-errors", "imp_nope", "--account", "d"], env, tmp_path)

    assert account.account == "c"
    assert unknown.returncode == 1, unknown.describe()
    assert said(unknown) == ["leadmail: Import 'imp_nope' was not found"]
    assert stranger.returncode == 2, stranger.describe()
    assert said(stranger)[0].startswith("leadmail: no account named 'd'. ")
