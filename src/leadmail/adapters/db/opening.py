"""Why a database would not open, said as a port error that names it: the server and the
database's name (never the user's password: no URL is repeated), or the SQLite file and
its folder. A setting to fix is StorageMisconfigured; a server that does not answer is
StorageUnavailable (an outage, retried later)."""

from __future__ import annotations

import os
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg

from leadmail.ports.errors import StorageMisconfigured, StorageUnavailable

POSTGRES_PORT = 5432
RETRY = "retry when it is up"

# The server answered, and refused who we said we are.
_LOGIN_REFUSED: tuple[type[BaseException], ...] = (
    asyncpg.InvalidAuthorizationSpecificationError,  # no such role, pg_hba refuses
    asyncpg.InvalidPasswordError,
)


def server_of(dsn: str) -> str:
    """``postgresql://u:pw@db.example:6432/x`` -> ``db.example:6432`` (no credentials)."""
    parts = urlsplit(dsn)
    try:
        port = parts.port or POSTGRES_PORT
    except ValueError:  # not a number: asyncpg says so itself, later
        port = POSTGRES_PORT
    host = parts.hostname or parse_qs(parts.query).get("host", ["localhost"])[0]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def database_of(dsn: str) -> str:
    """The database's name as Postgres takes it: the path, else the user's name."""
    parts = urlsplit(dsn)
    return unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "postgres"


def postgres_refusal(error: BaseException, dsn: str) -> StorageUnavailable:
    """What a failed first connection to the database at ``dsn`` means."""
    server = server_of(dsn)
    if isinstance(error, asyncpg.InvalidCatalogNameError):
        return StorageMisconfigured(
            f'the database "{database_of(dsn)}" does not exist on {server}', remedy="create it"
        )
    if isinstance(error, _LOGIN_REFUSED):
        # Postgres' own words name the user, never the password.
        return StorageMisconfigured(
            f"the database server {server} refused the login: {_one_line(str(error))}",
            remedy="check the user and password",
        )
    if isinstance(error, asyncpg.PostgresError):  # answered: too many connections, starting
        return StorageUnavailable(
            f"the database server {server} turned the connection away: {_one_line(str(error))}",
            remedy=RETRY,
        )
    return StorageUnavailable(
        f"the database server {server} cannot be reached: {_reason(error)}", remedy=RETRY
    )


def sqlite_problem(path: str, *, create: bool) -> StorageMisconfigured | None:
    """Why the SQLite database at ``path`` cannot be opened, if it cannot, found before
    SQLite is asked (it says only "unable to open database file", and aiosqlite's thread
    then prints tracebacks): its folder is missing or not writable, it is a folder, or,
    when it must not be created (``create`` False), the file is not there."""
    where = os.path.abspath(path)
    folder = os.path.dirname(where)
    if not os.path.isdir(folder):
        return StorageMisconfigured(
            f"the folder {folder} for the SQLite database does not exist", remedy="create it"
        )
    if os.path.isdir(where):
        return StorageMisconfigured(
            f"{where} is a folder, not a SQLite database file", remedy="name a file in it"
        )
    if not os.path.exists(where):
        if not create:
            return StorageMisconfigured(
                f"the SQLite database {where} does not exist, so it holds nothing to use",
                remedy="`leadmail migrate` creates it",
            )
        if not os.access(folder, os.W_OK | os.X_OK):
            return StorageMisconfigured(
                f"the SQLite database {where} cannot be created: {folder} is not writable",
                remedy="make it writable",
            )
    return None


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return _one_line(str(error)) or type(error).__name__


def _one_line(text: str) -> str:
    return " ".join(text.split())
