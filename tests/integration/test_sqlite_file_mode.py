"""A new SQLite database file is its owner's alone (0600), its -wal and -shm files too; a
file that was there keeps the mode it had. The process runs under the usual umask (022),
which would leave a file made without care readable by everyone (0644)."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.migrate import migrate
from leadmail.ports.errors import StorageMisconfigured
from tests.contract.support import new_account_key


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


async def test_a_new_database_file_and_its_side_files_are_the_owners_alone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "leadmail.db"
    async with Database.from_url(f"sqlite:///{path}").running() as database:
        await migrate(database)
        assert mode_of(path) == 0o600
        await new_account_key(PiccoloApiKeyStore(database), label="mode", prefix="lm_mode")
    # While a connection is open, SQLite keeps its write-ahead log and shared memory
    # beside the file (the service's own connections last a statement or a transaction).
    connection = sqlite3.connect(path)
    try:
        connection.execute("UPDATE accounts SET account_id = account_id")
        connection.commit()
        side_files = [tmp_path / "leadmail.db-wal", tmp_path / "leadmail.db-shm"]
        assert all(p.exists() for p in side_files)
        assert [mode_of(p) for p in side_files] == [0o600, 0o600]
    finally:
        connection.close()

    assert mode_of(path) == 0o600
    # Not an empty shell: the service's tables are in it.
    assert path.stat().st_size > 0


async def test_an_existing_database_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with Database.from_url(f"sqlite:///{path}").running() as database:
        await migrate(database)
    path.chmod(0o640)  # its owner's choice: a group that reads backups, say

    async with Database.from_url(f"sqlite:///{path}").running() as database:
        await migrate(database)
        await new_account_key(PiccoloApiKeyStore(database), label="mode", prefix="lm_keep")

    assert mode_of(path) == 0o640


async def test_a_database_in_a_missing_folder_is_refused_naming_the_folder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nowhere" / "leadmail.db"
    with pytest.raises(StorageMisconfigured) as caught:
        async with Database.from_url(f"sqlite:///{path}").running():
            pass
    # Said before SQLite is asked (its own words: "unable to open database file").
    assert caught.value.message == (
        f"the folder {path.parent} for the SQLite database does not exist"
    )
    assert not path.parent.exists()
