"""A database that is not there surfaces as StorageUnavailable, never as a driver error.

These need no running server: the Postgres case points at a closed port and the SQLite case
at a file that cannot be opened.
"""

from __future__ import annotations

import re
import socket
import sqlite3
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.migrate import applied_migrations, migrate
from leadmail.domain.lead_listing import LeadQuery
from leadmail.ports.errors import StorageMisconfigured, StorageUnavailable
from tests.contract.support import T0, a_lead, unique_digest

CLOSED_PORT_URL = "postgresql://postgres@127.0.0.1:1/leadmail"
ACCOUNT = "acc_unreachable"
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")

Call = Callable[[Database], Awaitable[object]]

CALLS: dict[str, Call] = {
    "leads.add": lambda db: PiccoloLeadRepository(db).add(a_lead(ACCOUNT)),
    "leads.get": lambda db: PiccoloLeadRepository(db).get(ACCOUNT, "ld_x"),
    "leads.replace": lambda db: PiccoloLeadRepository(db).replace(a_lead(ACCOUNT)),
    "leads.delete": lambda db: PiccoloLeadRepository(db).delete(ACCOUNT, "ld_x"),
    "leads.list": lambda db: PiccoloLeadRepository(db).list(ACCOUNT, LeadQuery()),
    "keys.create_key": lambda db: PiccoloApiKeyStore(db).create_key(
        account_name="acct", label="x", digest=unique_digest(), prefix="lm_x", now=T0
    ),
    "keys.find_by_digest": lambda db: PiccoloApiKeyStore(db).find_by_digest(unique_digest()),
    "keys.list_keys": lambda db: PiccoloApiKeyStore(db).list_keys(),
    "keys.list_keys_of_one": lambda db: PiccoloApiKeyStore(db).list_keys("acct"),
    "keys.revoke": lambda db: PiccoloApiKeyStore(db).revoke("key_x", T0),
    "keys.touch": lambda db: PiccoloApiKeyStore(db).touch("key_x", T0),
    "keys.count_keys": lambda db: PiccoloApiKeyStore(db).count_keys(),
    "migrate": migrate,
    "applied_migrations": applied_migrations,
}


def build_ignoring_piccolos_version_probe(url: str) -> Database:
    # Piccolo's Engine.__init__ connects to ask the server's version and warns when it
    # cannot; under warnings-as-errors that warning is raised from the constructor. That is
    # pinned by test_building_a_database_does_not_connect; here it must not hide what the
    # adapters do once the object exists.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*Unable to (fetch server|connect)")
        return Database.from_url(url, connect_timeout=2.0)


@pytest.fixture(params=["postgres-closed-port", "sqlite-unopenable-file"])
def unreachable(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    if request.param == "postgres-closed-port":
        return build_ignoring_piccolos_version_probe(CLOSED_PORT_URL)
    return Database.from_url(f"sqlite:///{tmp_path / 'no-such-directory' / 'leadmail.db'}")


def assert_translated(error: StorageUnavailable) -> None:
    # Translated from the driver's own error (``raise ... from e``), which is kept as cause.
    assert isinstance(error.__cause__, OSError | sqlite3.OperationalError)
    assert error.code == "STORAGE_UNAVAILABLE"


async def test_start_raises_storage_unavailable(unreachable: Database) -> None:
    with pytest.raises(StorageUnavailable) as caught:
        await unreachable.start()

    if unreachable.kind == "sqlite":
        # Found before SQLite is asked (adapters/db/opening.py): a setting to fix.
        assert isinstance(caught.value, StorageMisconfigured)
        assert "no-such-directory for the SQLite database does not exist" in str(caught.value)
    else:
        assert_translated(caught.value)
    await unreachable.close()  # nothing was opened; closing must still be safe


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
async def test_every_call_raises_storage_unavailable(unreachable: Database, call: Call) -> None:
    with pytest.raises(StorageUnavailable) as caught:
        await call(unreachable)

    assert_translated(caught.value)


@pytest.fixture
def silent_listener() -> Iterator[socket.socket]:
    """A TCP port that accepts connections (the kernel does) and never answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    try:
        yield listener
    finally:
        listener.close()


def test_building_a_database_does_not_connect(silent_listener: socket.socket) -> None:
    # Connecting is start()'s job, where errors are translated. Building the object must not
    # touch the network: that blocks the caller (the CLI builds it inside its event loop)
    # for up to connect_timeout and, under warnings-as-errors, raises a bare Warning.
    port = silent_listener.getsockname()[1]
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Database.from_url(f"postgresql://postgres@127.0.0.1:{port}/x", connect_timeout=0.5)
    elapsed = time.monotonic() - started

    try:
        connection, _ = silent_listener.accept()
    except BlockingIOError:
        connected = False
    else:
        connection.close()
        connected = True
    observed = {
        "connected": connected,
        "blocked_for_the_connect_timeout": elapsed >= 0.5,
        "warned": [ANSI_COLOUR.sub("", str(w.message)) for w in caught],
    }
    expected = {"connected": False, "blocked_for_the_connect_timeout": False, "warned": []}
    assert observed == expected, f"Database.from_url(): {observed}"
