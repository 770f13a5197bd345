from __future__ import annotations

from datetime import datetime
from typing import Protocol

from leadmail.domain.sender_domains import SenderDomain


class SenderDomainRepository(Protocol):
    """The domains each account may send from (domain/sender_domains.py): at most one row
    per account and domain, the domain as ``check_domain`` gives it. An account's domains
    go with it. Raises StorageUnavailable when unreachable."""

    async def add(self, account_id: str, domain: str, now: datetime) -> tuple[SenderDomain, bool]:
        """The account's ``domain``, stored at ``now`` unless the account has it already,
        and whether it was added: (the stored one, with its first ``created_at``; False)
        when it was there. Two adds of one domain at once store it once."""
        ...

    async def remove(self, account_id: str, domain: str) -> bool:
        """Whether the account had ``domain``; it has not now."""
        ...

    async def list(self, account_id: str) -> list[SenderDomain]:
        """The account's domains ordered by domain (none for an unknown account)."""
        ...
