"""adapters/db/opening.py: why a database would not open, naming it without credentials."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from leadmail.adapters.db.opening import (
    database_of,
    postgres_refusal,
    server_of,
    sqlite_problem,
)
from leadmail.ports.errors import StorageMisconfigured, StorageUnavailable

DSN = "postgresql://app:hunter2@db.example:6432/school"


@pytest.mark.parametrize(
    ("dsn", "server", "database"),
    [
        (DSN, "db.example:6432", "school"),
        ("postgresql://postgres@127.0.0.1/no_such_db", "127.0.0.1:5432", "no_such_db"),
        ("postgres://app:pw@[::1]:5433/my%20db", "[::1]:5433", "my db"),
        ("postgresql://app@localhost", "localhost:5432", "app"),  # Postgres: the user's name
        ("postgresql:///school?host=/run/postgresql", "/run/postgresql:5432", "school"),
        ("postgresql:///school", "localhost:5432", "school"),
    ],
)
def test_the_server_and_the_database_are_named_without_credentials(
    dsn: str, server: str, database: str
) -> None:
    assert (server_of(dsn), database_of(dsn)) == (server, database)


def test_a_database_that_does_not_exist_is_configuration() -> None:
    error = postgres_refusal(asyncpg.InvalidCatalogNameError('database "school" ...'), DSN)

    assert isinstance(error, StorageMisconfigured)
    assert error.message == 'the database "school" does not exist on db.example:6432'
    assert error.remedy == "create it"


@pytest.mark.parametrize(
    "refusal",
    [
        asyncpg.InvalidPasswordError('password authentication failed for user "app"'),
        asyncpg.InvalidAuthorizationSpecificationError('role "app" does not exist'),
    ],
)
def test_a_refused_login_is_configuration_and_never_shows_the_password(
    refusal: asyncpg.PostgresError,
) -> None:
    error = postgres_refusal(refusal, DSN)

    assert isinstance(error, StorageMisconfigured)
    assert error.message == f"the database server db.example:6432 refused the login: {refusal}"
    assert "hunter2" not in error.message + error.remedy


@pytest.mark.parametrize(
    ("cause", "reason"),
    [
        (ConnectionRefusedError(111, "Connection refused"), "connection refused"),
        (TimeoutError(), "no answer in time"),
        (OSError(113, "No route to host"), "no route to host"),
    ],
)
def test_a_server_that_does_not_answer_is_an_outage(cause: OSError, reason: str) -> None:
    error = postgres_refusal(cause, DSN)

    assert type(error) is StorageUnavailable
    assert error.message == f"the database server db.example:6432 cannot be reached: {reason}"
    assert error.remedy == "retry when it is up"


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such"

    problem = sqlite_problem(str(folder / "x.db"), create=True)

    assert problem is not None
    assert problem.message == f"the folder {folder} for the SQLite database does not exist"


def test_a_folder_given_as_the_file_is_named(tmp_path: Path) -> None:
    problem = sqlite_problem(str(tmp_path), create=True)

    assert problem is not None
    assert problem.message == f"{tmp_path} is a folder, not a SQLite database file"


def test_a_file_that_is_not_there_is_made_only_by_a_command_that_may_create_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "leadmail.db"

    assert sqlite_problem(str(path), create=True) is None
    problem = sqlite_problem(str(path), create=False)

    assert problem is not None
    assert problem.message == (
        f"the SQLite database {path} does not exist, so it holds nothing to use"
    )
    path.touch()
    assert sqlite_problem(str(path), create=False) is None


def test_a_relative_path_is_named_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    problem = sqlite_problem("./leadmail.db", create=False)

    assert problem is not None
    assert str(tmp_path / "leadmail.db") in problem.message
