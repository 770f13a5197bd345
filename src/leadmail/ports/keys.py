from __future__ import annotations

from datetime import datetime
from typing import Protocol

from leadmail.domain.keys import ApiKey


class ApiKeyStore(Protocol):
    """Accounts and the digests of their keys. Raises StorageUnavailable when unreachable."""

    async def create_key(
        self, *, account_name: str, label: str, digest: str, prefix: str, now: datetime
    ) -> ApiKey:
        """Store a key for the named account, creating the account if it is new, in one
        transaction."""
        ...

    async def find_by_digest(self, digest: str) -> ApiKey | None: ...

    async def list_keys(self, account_name: str | None = None) -> list[ApiKey]:
        """Keys oldest first, all accounts unless one is named."""
        ...

    async def revoke(self, key_id: str, now: datetime) -> ApiKey | None:
        """Mark the key revoked (idempotent: a revoked key keeps its first revocation time).
        None if there is no such key."""
        ...

    async def touch(self, key_id: str, now: datetime) -> None:
        """Record that the key was used."""
        ...

    async def count_keys(self) -> int: ...
