from __future__ import annotations

from datetime import datetime
from typing import Protocol


class InstallationSecrets(Protocol):
    """Secrets of this installation kept in its database, by name: written once, never
    changed, shared by every process on the database. Raises StorageUnavailable when
    unreachable."""

    async def keep(self, name: str, candidate: str, now: datetime) -> str:
        """The secret stored under ``name``; when there is none, ``candidate`` is stored
        and returned. Two processes at once store one of theirs, and both get that one."""
        ...
