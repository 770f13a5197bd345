"""Every send goes through here: its messages are recorded (pending) before the provider
is called, updated with what became of them, and a request under an Idempotency-Key acts
once: replayed when it succeeded, resumed for what failed, refused while it runs."""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.email import Message, MessageStatus, new_message_id
from leadmail.domain.idempotency import (
    Claim,
    ClaimState,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    fingerprint,
    new_claim_token,
)
from leadmail.ports.idempotency import IdempotencyStore
from leadmail.ports.messages import MessageRepository
from leadmail.services.addressing import SendPlan
from leadmail.services.delivery import Delivery
from leadmail.services.results import SendResult


class Outbox:
    def __init__(
        self,
        messages: MessageRepository,
        claims: IdempotencyStore,
        delivery: Delivery,
        clock: Clock = utc_now,
    ) -> None:
        self._messages = messages
        self._claims = claims
        self._delivery = delivery
        self._clock = clock

    async def send(self, account_id: str, plan: SendPlan, key: str | None) -> SendResult:
        """Send what ``plan`` says. The result holds every message; when any failed, its
        failure (DeliveryRejected or DeliveryUnavailable, holding them all) is raised."""
        if key is None:
            claim = None
            messages = await self._record(account_id, plan)
        else:
            held = await self._claim(account_id, plan, key)
            if isinstance(held, SendResult):
                return held  # a replay
            claim, messages = held
        try:
            todo = [
                (email, message)
                for email, message in zip(plan.emails, messages, strict=True)
                if message.status is not MessageStatus.SENT
            ]
            outcomes = (
                [await self._delivery.deliver_one(*todo[0])]
                if len(todo) == 1
                else await self._delivery.deliver(todo)
            )
            await self._messages.update([o.message for o in outcomes])
        finally:
            if claim is not None:
                await self._claims.finish(claim, self._clock())
        updated = {o.message.message_id: o.message for o in outcomes}
        return SendResult(
            messages=[updated.get(m.message_id, m) for m in messages],
            errors={o.message.message_id: o.error for o in outcomes if o.error is not None},
            per_recipient=plan.per_recipient,
        ).checked()

    async def _claim(
        self, account_id: str, plan: SendPlan, key: str
    ) -> SendResult | tuple[Claim, list[Message]]:
        """The request under ``key`` taken by this call, with its messages recorded (the
        claim and the messages), or the result of its first run to replay."""
        now = self._clock()
        mine = Claim(
            account_id=account_id,
            key=key,
            fingerprint=fingerprint(plan.operation, plan.canonical()),
            token=new_claim_token(),
            state=ClaimState.RUNNING,
            message_ids=(),
            created_at=now,
            updated_at=now,
        )
        held = await self._claims.claim(mine)
        if held.token == mine.token:
            messages = await self._record(account_id, plan)
            await self._claims.attach(mine, [m.message_id for m in messages], self._clock())
            return mine, messages
        if held.fingerprint != mine.fingerprint:
            raise IdempotencyKeyReused()
        if held.state is ClaimState.RUNNING and not held.stale(now):
            raise IdempotencyInProgress()
        messages = await self._messages.get_many(account_id, held.message_ids)
        complete = len(messages) == len(plan.emails) == len(held.message_ids)
        if (
            held.state is ClaimState.FINISHED
            and complete
            and all(m.status is MessageStatus.SENT for m in messages)
        ):
            return SendResult(messages, replayed=True, per_recipient=plan.per_recipient)
        taken = await self._claims.reclaim(held, new_claim_token(), self._clock())
        if taken is None:
            raise IdempotencyInProgress()
        if not complete:  # the first run died before recording its messages
            messages = await self._record(account_id, plan)
            await self._claims.attach(taken, [m.message_id for m in messages], self._clock())
        return taken, messages

    async def _record(self, account_id: str, plan: SendPlan) -> list[Message]:
        now = self._clock()
        provider = self._delivery.provider
        messages = [
            Message.pending(new_message_id(), account_id, email, plan.template_id, provider, now)
            for email in plan.emails
        ]
        await self._messages.add(messages)
        return messages
