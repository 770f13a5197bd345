"""The installation's secrets on Piccolo: read once per process start, so through the
query builder."""

from __future__ import annotations

from datetime import datetime

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.ports.installation_secrets import InstallationSecrets

_REFUSED = "The database refused to store the installation's secret"


class PiccoloInstallationSecrets(InstallationSecrets):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.installation_secrets

    async def keep(self, name: str, candidate: str, now: datetime) -> str:
        t = self._t
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                # Insert if absent, then read what is there: the first process's wins.
                await t.insert(t(name=name, value=candidate, created_at=now)).on_conflict(
                    target=t.name, action="DO NOTHING"
                )
            rows = await t.select(t.value).where(t.name == name)
        return str(rows[0]["value"])
