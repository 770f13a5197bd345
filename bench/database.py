"""The run's database: a fresh one on the Postgres server, dropped at the end, migrated by
``leadmail migrate``, with an API key from ``leadmail keys create``."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import subprocess
from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from bench.common import BIN, ROOT, log


def database_url(server_url: str, name: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path="/" + name))


def database_name(url: str) -> str:
    return urlsplit(url).path[1:]


@contextlib.contextmanager
def fresh_database(
    server_url: str, prefix: str = "leadmail_bench", *, keep: bool = False
) -> Iterator[str]:
    """A new, empty database on the server, dropped on exit (unless ``keep``)."""
    name = f"{prefix}_{secrets.token_hex(4)}"

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
        if not keep:
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


class Prepared(NamedTuple):
    key: str  # the API key of the account "bench"
    account_id: str
    postgres_version: str


def prepare(db_url: str, env: dict[str, str]) -> Prepared:
    """Migrates the database and creates the account "bench" with a key."""
    log(f"database {database_name(db_url)}: migrating, creating a key")
    leadmail_cli(["migrate"], _cli_env(db_url, env))
    key, account_id = account_with_key(db_url, env, "bench")
    postgres_version = asyncio.run(_fetch_value(db_url, "SHOW server_version"))
    return Prepared(key, account_id, postgres_version)


def account_with_key(db_url: str, env: dict[str, str], name: str) -> tuple[str, str]:
    """A new account ``name`` and a key of it: (key, account id). The scenarios that
    measure one account of a given size (T, IM, EX) each take one of their own, so the
    leads the other scenarios wrote into "bench" are not in theirs."""
    created = leadmail_cli(
        ["keys", "create", "--account", name, "--label", "bench"], _cli_env(db_url, env)
    )
    key = created.strip().splitlines()[-1]
    account_id = asyncio.run(
        _fetch_value(db_url, "SELECT account_id FROM accounts WHERE name = $1", name)
    )
    return key, account_id


def _cli_env(db_url: str, env: dict[str, str]) -> dict[str, str]:
    return {**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_FORMAT": "json"}


def row_counts(db_url: str) -> dict[str, int]:
    """The rows the run wrote, by table."""

    async def count() -> dict[str, int]:
        connection = await asyncpg.connect(db_url, timeout=10)
        try:
            return {
                table: int(await connection.fetchval(f"SELECT count(*) FROM {table}"))  # noqa: S608
                for table in ("leads", "messages")
            }
        finally:
            await connection.close()

    return asyncio.run(count())
