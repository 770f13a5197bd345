"""INTERIM, to be deleted by the one outgoing pipeline (issue 25): the sender rule on the
API's send paths. Addressing no longer checks senders; until the pipeline's policy step
calls ``SenderRules.check`` itself, this Outbox does it before anything is recorded or
claimed, so SENDER_NOT_ALLOWED holds on POST /email/send and /email/template meanwhile."""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.ports.idempotency import IdempotencyStore
from leadmail.ports.messages import MessageRepository
from leadmail.services.addressing import SendPlan
from leadmail.services.delivery import Delivery
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult
from leadmail.services.sender_rules import SenderRules


class SenderCheckedOutbox(Outbox):
    def __init__(
        self,
        messages: MessageRepository,
        claims: IdempotencyStore,
        delivery: Delivery,
        clock: Clock = utc_now,
        *,
        rules: SenderRules,
    ) -> None:
        super().__init__(messages, claims, delivery, clock)
        self._rules = rules

    async def send(self, account_id: str, plan: SendPlan, key: str | None) -> SendResult:
        """As Outbox.send, after SenderRules.check (SenderNotAllowed, nothing stored). Every
        email of a plan has the request's one sender (services/addressing.py)."""
        first = plan.emails[0]
        await self._rules.check(account_id, first.sender, first.reply_to)
        return await super().send(account_id, plan, key)
