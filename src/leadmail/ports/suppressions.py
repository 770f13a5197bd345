"""Where each account's suppression list is kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.suppressions import Added, Suppression, SuppressionReason


class SuppressionRepository(Protocol):
    """Each account's entries, one per digest. Raises StorageUnavailable when the store
    cannot be reached."""

    async def add(self, entry: Suppression) -> Added:
        """Store ``entry`` unless the account has one for its digest already; an existing
        entry is replaced only when ``entry.reason`` outranks its reason (a bounce over a
        manual entry). Returns the entry now stored and whether this add wrote it. Two adds
        at once for one address leave one entry."""
        ...

    async def find(self, account_id: str, digests: Sequence[str]) -> list[Suppression]:
        """The account's entries among ``digests``, in one indexed lookup (a send checks
        every recipient of a request or batch at once)."""
        ...

    async def get(self, account_id: str, digest: str) -> Suppression | None: ...

    async def list(
        self,
        account_id: str,
        limit: int,
        after: tuple[datetime, str] | None = None,
        reason: SuppressionReason | None = None,
    ) -> list[Suppression]:
        """Up to ``limit + 1`` of the account's entries, newest first ((created_at, digest)
        descending), strictly after ``after`` (the (created_at, digest) of the last entry of the
        page before), only those of ``reason`` when given."""
        ...

    async def remove(self, account_id: str, digest: str) -> bool:
        """Delete the account's entry for ``digest``; whether there was one."""
        ...

    async def erase(self, account_id: str, digest: str) -> int:
        """Replace the address of the account's entry for ``digest`` by the digest itself
        (Suppression.erased): it still suppresses. How many entries changed (0 or 1)."""
        ...
