"""The InstallationSecrets contract (ports/installation_secrets.py), run against every
adapter; and on SQLite, a key kept survives the database being opened again (a restart)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.installation_secrets import PiccoloInstallationSecrets
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.memory.installation_secrets import MemoryInstallationSecrets
from leadmail.ports.installation_secrets import InstallationSecrets
from tests.contract.conftest import Adapter
from tests.contract.support import T0, moment


@pytest.fixture
async def kept(adapter: Adapter, sqlite_url: str) -> AsyncIterator[InstallationSecrets]:
    if adapter.kind == "memory":
        yield MemoryInstallationSecrets()
        return
    if adapter.shared_database is not None:
        yield PiccoloInstallationSecrets(adapter.shared_database)
        return
    database = Database.from_url(sqlite_url)
    await database.start()
    try:
        assert await migrate(database)
        yield PiccoloInstallationSecrets(database)
    finally:
        await database.close()


def a_name() -> str:
    # The Postgres case shares one database with the whole session: a name of its own.
    return f"test_{secrets.token_hex(6)}"


async def test_the_first_secret_is_kept_and_returned(kept: InstallationSecrets) -> None:
    name = a_name()

    first = await kept.keep(name, "first-candidate", T0)
    again = await kept.keep(name, "second-candidate", moment(1_000))

    assert first == again == "first-candidate"


async def test_names_are_kept_apart(kept: InstallationSecrets) -> None:
    one, other = a_name(), a_name()

    assert await kept.keep(one, "one", T0) == "one"
    assert await kept.keep(other, "other", T0) == "other"


async def test_processes_at_once_all_get_one_secret(kept: InstallationSecrets) -> None:
    name = a_name()

    got = await asyncio.gather(*(kept.keep(name, f"candidate-{i}", T0) for i in range(6)))

    assert len(set(got)) == 1
    assert got[0].startswith("candidate-")


async def test_a_kept_secret_survives_the_database_opened_again(sqlite_url: str) -> None:
    async with Database.from_url(sqlite_url).running() as database:
        await migrate(database)
        first = await PiccoloInstallationSecrets(database).keep("key", "made-on-first-start", T0)
    async with Database.from_url(sqlite_url).running() as database:
        again = await PiccoloInstallationSecrets(database).keep("key", "another", moment(5))

    assert first == again == "made-on-first-start"
