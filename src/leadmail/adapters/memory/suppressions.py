from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.domain.suppressions import Added, Suppression, SuppressionReason
from leadmail.ports.suppressions import SuppressionRepository


class MemorySuppressionRepository(SuppressionRepository):
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Suppression] = {}  # (account, digest)

    async def add(self, entry: Suppression) -> Added:
        where = (entry.account_id, entry.digest)
        held = self._entries.get(where)
        if held is None or entry.reason.outranks(held.reason):
            self._entries[where] = entry
            return Added(entry, written=True)
        return Added(held, written=False)

    async def find(self, account_id: str, digests: Sequence[str]) -> list[Suppression]:
        found = (self._entries.get((account_id, digest)) for digest in set(digests))
        return [entry for entry in found if entry is not None]

    async def get(self, account_id: str, digest: str) -> Suppression | None:
        return self._entries.get((account_id, digest))

    async def list(
        self,
        account_id: str,
        limit: int,
        after: tuple[datetime, str] | None = None,
        reason: SuppressionReason | None = None,
    ) -> list[Suppression]:
        mine = sorted(
            (
                e
                for e in self._entries.values()
                if e.account_id == account_id and (reason is None or e.reason is reason)
            ),
            key=lambda e: (e.created_at, e.digest),
            reverse=True,
        )
        if after is not None:
            mine = [e for e in mine if (e.created_at, e.digest) < after]
        return mine[: limit + 1]

    async def remove(self, account_id: str, digest: str) -> bool:
        return self._entries.pop((account_id, digest), None) is not None

    async def erase(self, account_id: str, digest: str) -> int:
        held = self._entries.get((account_id, digest))
        if held is None or held.email == held.digest:
            return 0
        self._entries[(account_id, digest)] = replace(held, email=held.digest)
        return 1
