from __future__ import annotations

from datetime import datetime

from leadmail.ports.installation_secrets import InstallationSecrets


class MemoryInstallationSecrets(InstallationSecrets):
    def __init__(self) -> None:
        self._secrets: dict[str, str] = {}

    async def keep(self, name: str, candidate: str, now: datetime) -> str:
        return self._secrets.setdefault(name, candidate)
