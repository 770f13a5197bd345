"""Step 2 of the way out (services/outgoing.py): the rules every message obeys before it is
recorded, whichever path sends it: the sender rule (services/sender_rules.py) and the
suppression list; quotas join here, so that each is written once."""

from __future__ import annotations

from collections.abc import Iterable

from leadmail.domain.addresses import email_key
from leadmail.domain.email import Mailbox
from leadmail.domain.suppressions import Suppression, SuppressionCheck, address_digest
from leadmail.ports.suppressions import SuppressionRepository
from leadmail.services.sender_rules import SenderRules


class SendPolicy:
    def __init__(self, suppressions: SuppressionRepository, senders: SenderRules) -> None:
        self._suppressions = suppressions
        self._senders = senders

    async def allow(self, account_id: str, sender: Mailbox, reply_to: Mailbox | None) -> None:
        """Raises SenderNotAllowed unless the account may send from ``sender`` with
        replies to ``reply_to`` (a dict lookup when its sender domains are cached)."""
        await self._senders.check(account_id, sender, reply_to)

    def check(
        self, account_id: str, addresses: Iterable[str], *, transactional: bool = False
    ) -> SuppressionCheck:
        """The question ``suppressed`` asks, for a store that answers it in the same step
        as it records the messages (MessageRepository.add_unless_suppressed)."""
        digests = tuple({address_digest(email_key(a)) for a in addresses})
        return SuppressionCheck(account_id, digests, transactional)

    def barred(
        self, addresses: Iterable[str], entries: Iterable[Suppression], *, transactional: bool
    ) -> dict[str, Suppression]:
        """Of ``entries`` found for ``addresses``, those that stop the send, by address in
        compared form (as ``suppressed`` answers)."""
        by_digest = {address_digest(email_key(a)): email_key(a) for a in addresses}
        return {
            by_digest[e.digest]: e
            for e in entries
            if e.digest in by_digest and e.holds(transactional)
        }

    async def suppressed(
        self, account_id: str, addresses: Iterable[str], *, transactional: bool = False
    ) -> dict[str, Suppression]:
        """Which of ``addresses`` (normalised, as a Mailbox holds them) the account must not
        mail, by address in compared form (case folded), with the entry that says so; ONE
        lookup for them all. ``transactional``: only the entries that bind such a send
        (domain/suppressions.py) count."""
        addresses = list(addresses)
        question = self.check(account_id, addresses, transactional=transactional)
        found = await self._suppressions.find(account_id, question.digests)
        return self.barred(addresses, found, transactional=transactional)
