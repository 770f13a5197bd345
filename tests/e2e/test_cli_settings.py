"""Every bad or missing setting, tried as a new user tries it, against the real command:
one line on stderr naming the setting (or the file and line, or the database) and what it
expects; exit 2 for configuration, 1 for an outage; never a traceback."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.e2e.cli import CliResult, cli_env, run_cli, run_cli_jobs
from tests.e2e.names import new_name
from tests.e2e.test_cli_words import said
from tests.support.network import free_port

TEMPLATE = "---\nid: hello\nname: Hello\nsubject: Hi\n---\n<p>Hello</p>\n<p>{body}</p>\n"
SECRET_KEY = "e2e-unsubscribe-signing-key-0123456789abcdef"
NOTHING_TO_USE = "does not exist, so it holds nothing to use (`leadmail migrate` creates it"


def serve() -> list[str]:
    return ["serve", "--port", str(free_port())]


def assert_said(result: CliResult, line: str, exit_code: int) -> None:
    """The command said ``line`` and nothing else (bar JSON logs), and exited so."""
    assert result.returncode == exit_code, result.describe()
    assert said(result) == [line], result.describe()
    for noise in ("Traceback", "ExceptionGroup", "Event loop is closed"):
        assert noise not in result.stderr, result.describe()
    assert result.stdout == "", result.describe()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'leadmail.db'}"


def test_a_templates_dir_that_does_not_exist_is_one_line(sqlite_url: str, tmp_path: Path) -> None:
    missing = tmp_path / "my-templates"
    env = cli_env(sqlite_url, {"LEADMAIL_TEMPLATES_DIR": str(missing)})

    results = run_cli_jobs([(["migrate"], env), (serve(), env)], tmp_path)

    line = (
        f"leadmail: LEADMAIL_TEMPLATES_DIR: template directory {missing}"
        " does not exist or is not a folder"
    )
    for result in results:
        assert_said(result, line, 2)
    assert not (tmp_path / "leadmail.db").exists()  # migrate read the catalog first


@pytest.mark.parametrize("placeholder", ["{{ name", "{{bad-name}}"])
def test_a_malformed_placeholder_names_the_file_and_its_line(
    sqlite_url: str, tmp_path: Path, placeholder: str
) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "hello.html").write_text(TEMPLATE.format(body=f"Dear {placeholder}"))
    env = cli_env(sqlite_url, {"LEADMAIL_TEMPLATES_DIR": str(folder)})

    results = run_cli_jobs([(["migrate"], env), (serve(), env)], tmp_path)

    near = f"{placeholder}</p>\n"
    line = (
        f"leadmail: LEADMAIL_TEMPLATES_DIR: {folder / 'hello.html'}:7: the body has a"
        f" malformed placeholder near {near!r}: use {{{{name}}}} with letters, digits and"
        " underscores"
    )
    for result in results:
        assert_said(result, line, 2)


@pytest.mark.postgres
def test_a_postgres_database_that_does_not_exist_is_named_for_every_command(
    postgres_server: str, tmp_path: Path
) -> None:
    server = urlsplit(postgres_server)
    name = new_name("no_such_db").replace("-", "_")
    # A password in the URL (trust ignores it): never repeated.
    netloc = f"{server.username or 'postgres'}:hunter2-secret@{server.hostname}:{server.port}"
    url = urlunsplit((server.scheme, netloc, f"/{name}", "", ""))
    env = cli_env(url, {"LEADMAIL_PUBLIC_URL": "http://127.0.0.1:1"})
    commands = [
        ["migrate"],
        ["keys", "create", "--account", "a"],
        ["keys", "list"],
        ["accounts", "quota", "a"],
        ["campaigns", "status", "cmp_x"],
        serve(),
        ["worker"],
    ]

    results = run_cli_jobs([(args, env) for args in commands], tmp_path)

    line = (
        f'leadmail: the database "{name}" does not exist on {server.hostname}:{server.port}'
        " (create it, or set LEADMAIL_DATABASE_URL)"
    )
    for result in results:
        assert_said(result, line, 2)
        assert "hunter2-secret" not in result.stderr


@pytest.mark.postgres
def test_a_refused_login_is_configuration(postgres_server: str, tmp_path: Path) -> None:
    server = urlsplit(postgres_server)
    netloc = f"no_such_role:hunter2-secret@{server.hostname}:{server.port}"
    url = urlunsplit((server.scheme, netloc, "/postgres", "", ""))

    results = run_cli_jobs([(args, cli_env(url)) for args in (["keys", "list"], serve())], tmp_path)

    line = (
        f"leadmail: the database server {server.hostname}:{server.port} refused the login:"
        ' role "no_such_role" does not exist'
        " (check the user and password, or set LEADMAIL_DATABASE_URL)"
    )
    for result in results:
        assert_said(result, line, 2)
        assert "hunter2-secret" not in result.stderr


def test_a_database_server_that_does_not_answer_is_an_outage(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    env = cli_env(f"postgresql://postgres:hunter2-secret@127.0.0.1:{port}/leadmail")

    results = run_cli_jobs([(["keys", "list"], env), (["migrate"], env), (serve(), env)], tmp_path)

    line = (
        f"leadmail: the database server 127.0.0.1:{port} cannot be reached: connection refused"
        " (retry when it is up, or set LEADMAIL_DATABASE_URL)"
    )
    for result in results:
        assert_said(result, line, 1)
        assert "hunter2-secret" not in result.stderr


def test_a_sqlite_file_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such" / "dir"
    env = cli_env(f"sqlite:///{folder / 'x.db'}")
    commands = [["migrate"], ["keys", "create", "--account", "a"], ["keys", "list"], serve()]

    results = run_cli_jobs([(args, env) for args in commands], tmp_path)

    line = (
        f"leadmail: the folder {folder} for the SQLite database does not exist"
        " (create it, or set LEADMAIL_DATABASE_URL)"
    )
    for result in results:
        assert_said(result, line, 2)
    assert not (tmp_path / "no").exists()


def test_a_default_sender_that_is_no_address_is_refused_at_start(
    sqlite_url: str, tmp_path: Path
) -> None:
    env = cli_env(sqlite_url, {"LEADMAIL_EMAIL_DEFAULT_FROM": "not an address"})

    results = run_cli_jobs([(["keys", "list"], env), (serve(), env)], tmp_path)

    line = (
        "leadmail: configuration error: LEADMAIL_EMAIL_DEFAULT_FROM must be an address such as"
        " hello@acme.example or 'Acme Academy <hello@acme.example>', got 'not an address',"
        " which is not a valid email address: An email address must have an @-sign."
    )
    for result in results:
        assert_said(result, line, 2)
    assert not (tmp_path / "leadmail.db").exists()


def redis_down() -> tuple[str, str]:
    port = free_port()
    line = (
        f"leadmail: Redis at 127.0.0.1:{port} cannot be reached: connection refused"
        " (retry when it is up, or set LEADMAIL_REDIS_URL)"
    )
    return f"redis://127.0.0.1:{port}/0", line


def test_serve_with_a_redis_that_does_not_answer_is_an_outage(
    sqlite_url: str, tmp_path: Path
) -> None:
    url, line = redis_down()

    result = run_cli(serve(), cli_env(sqlite_url, {"LEADMAIL_REDIS_URL": url}), tmp_path)

    assert_said(result, line, 1)


@pytest.mark.postgres
def test_a_worker_with_a_redis_that_does_not_answer_is_an_outage(
    postgres_url: str, tmp_path: Path
) -> None:
    url, line = redis_down()
    env = cli_env(postgres_url, {"LEADMAIL_REDIS_URL": url, "LEADMAIL_PUBLIC_URL": "http://x"})

    assert_said(run_cli(["worker"], env, tmp_path), line, 1)


def test_commands_on_what_a_database_holds_never_create_a_sqlite_file(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Only `migrate`, `serve` and `keys create` make a database; a command that reads, or
    changes an account or a key that would be in it, says it is not there (a command on
    an account: that there is no such account, and how one is made)."""
    path = tmp_path / "leadmail.db"
    csv = tmp_path.parent / f"{tmp_path.name}-leads.csv"  # (not in the folder checked below)
    csv.write_text("email\nada@example.com\n")
    on_the_database = [
        ["keys", "list"],
        ["keys", "revoke", "key_x"],
        ["campaigns", "status", "cmp_x"],
        ["leads", "import-errors", "imp_x", "--account", "acme"],
        ["purge"],
    ]
    on_an_account = [
        ["accounts", "senders", "list", "acme"],
        ["accounts", "senders", "add", "acme", "acme.example"],
        ["accounts", "quota", "acme"],
        ["accounts", "quota", "acme", "10"],
        ["leads", "import", str(csv), "--account", "acme"],
        ["leads", "tag", "--account", "acme", "--filter", "{}", "--tags", "x"],
    ]

    results = run_cli_jobs(
        [(args, cli_env(sqlite_url)) for args in on_the_database + on_an_account], tmp_path
    )

    line = f"leadmail: the SQLite database {path} {NOTHING_TO_USE}, or set LEADMAIL_DATABASE_URL)"
    for result in results[: len(on_the_database)]:
        assert_said(result, line, 2)
    for result in results[len(on_the_database) :]:
        assert result.returncode == 2, result.describe()
        [refused] = said(result)
        assert refused.startswith("leadmail: no account named 'acme'. An account is made"), refused
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []  # no -wal or -shm either


def test_keys_list_on_a_database_without_keys_prints_the_header(
    sqlite_url: str, tmp_path: Path
) -> None:
    env = cli_env(sqlite_url)
    assert run_cli(["migrate"], env, tmp_path).returncode == 0

    listed = run_cli(["keys", "list"], env, tmp_path)

    assert listed.returncode == 0, listed.describe()
    assert listed.stdout.split() == [
        "key_id", "account", "label", "prefix", "created", "last_used", "revoked"
    ]  # fmt: skip


def test_commands_that_send_nothing_need_no_provider_settings(
    sqlite_url: str, tmp_path: Path
) -> None:
    env = cli_env(sqlite_url, {"LEADMAIL_EMAIL_PROVIDER": "resend"})  # and no API key
    assert run_cli(["migrate"], env, tmp_path).returncode == 0
    commands = [
        ["keys", "create", "--account", "acme"],
        ["keys", "list"],
        ["accounts", "quota", "acme"],
        ["accounts", "senders", "list", "acme"],
    ]
    created = run_cli(commands[0], env, tmp_path)  # the account, for the others
    assert created.returncode == 0, created.describe()

    for result in run_cli_jobs([(args, env) for args in commands[1:]], tmp_path):
        assert result.returncode == 0, result.describe()

    refused = run_cli(serve(), env, tmp_path)
    assert_said(
        refused,
        "leadmail: configuration error: LEADMAIL_EMAIL_API_KEY is required for the resend provider",
        2,
    )


@pytest.mark.postgres
def test_a_worker_still_requires_what_its_provider_needs(postgres_url: str, tmp_path: Path) -> None:
    env = cli_env(
        postgres_url,
        {
            "LEADMAIL_EMAIL_PROVIDER": "mailgun",
            "LEADMAIL_EMAIL_API_KEY": "key-e2e",
            "LEADMAIL_PUBLIC_URL": "http://x",
        },
    )

    migrated, refused = run_cli_jobs([(["migrate"], env), (["worker"], env)], tmp_path)

    assert migrated.returncode == 0, migrated.describe()
    assert_said(
        refused,
        "leadmail: configuration error: LEADMAIL_EMAIL_DOMAIN is required for the mailgun provider",
        2,
    )
