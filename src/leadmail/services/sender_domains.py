"""Use case: an account's sender domains managed (``leadmail accounts senders``)."""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.sender_domains import SenderDomain, check_domain
from leadmail.ports.sender_domains import SenderDomainRepository
from leadmail.services.sender_rules import SenderRules


class SenderDomainService:
    """Add, remove and list the domains an account may send from. A change is obeyed at
    once by this process's SenderRules, and by every other process within
    sender_rules.MAX_AGE_S."""

    def __init__(
        self, domains: SenderDomainRepository, rules: SenderRules, clock: Clock = utc_now
    ) -> None:
        self._domains = domains
        self._rules = rules
        self._clock = clock

    async def add(self, account_id: str, domain: str) -> tuple[SenderDomain, bool]:
        """The account's sender domain, and whether it was added (False: it had it).
        Raises ValidationFailed naming ``domain`` when it is not a host name."""
        added = await self._domains.add(account_id, _checked(domain), self._clock())
        self._rules.forget(account_id)
        return added

    async def remove(self, account_id: str, domain: str) -> tuple[str, bool]:
        """The domain as checked, and whether the account had it (it has not now). Raises
        as ``add``."""
        checked = _checked(domain)
        removed = await self._domains.remove(account_id, checked)
        self._rules.forget(account_id)
        return checked, removed

    async def list(self, account_id: str) -> list[SenderDomain]:
        """By domain."""
        return await self._domains.list(account_id)


def _checked(domain: str) -> str:
    try:
        return check_domain(domain)
    except ValueError as e:
        raise ValidationFailed.one("domain", str(e)) from e
