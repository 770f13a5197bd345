from __future__ import annotations

from datetime import datetime

from leadmail.domain.sender_domains import SenderDomain
from leadmail.ports.sender_domains import SenderDomainRepository


class MemorySenderDomainRepository(SenderDomainRepository):
    def __init__(self) -> None:
        self._domains: dict[str, dict[str, SenderDomain]] = {}  # by account, then domain

    async def add(self, account_id: str, domain: str, now: datetime) -> tuple[SenderDomain, bool]:
        held = self._domains.setdefault(account_id, {})
        stored = held.get(domain)
        if stored is not None:
            return stored, False
        added = held[domain] = SenderDomain(account_id, domain, now)
        return added, True

    async def remove(self, account_id: str, domain: str) -> bool:
        return self._domains.get(account_id, {}).pop(domain, None) is not None

    async def list(self, account_id: str) -> list[SenderDomain]:
        held = self._domains.get(account_id, {})
        return [held[domain] for domain in sorted(held)]
