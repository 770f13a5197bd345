"""An API send's way into the outgoing pipeline (services/outgoing.py): its messages
recorded, each sent as a batch of one, what became of them stored; and a request under an
Idempotency-Key acts once: replayed when it succeeded, resumed for what failed, refused
while it runs."""

from __future__ import annotations

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import BatchItem
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
from leadmail.services.outgoing import Outgoing
from leadmail.services.results import SendResult


class Outbox:
    def __init__(
        self,
        messages: MessageRepository,
        claims: IdempotencyStore,
        outgoing: Outgoing,
        clock: Clock = utc_now,
    ) -> None:
        self._messages = messages
        self._claims = claims
        self._outgoing = outgoing
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
        outgoing = self._outgoing
        try:
            deadline = outgoing.deadline()
            todo = [
                (message, email)
                for message, email in zip(messages, plan.emails, strict=True)
                if message.status is not MessageStatus.SENT
            ]
            delivered = await outgoing.deliver_each(
                [BatchItem(email, message.message_id) for message, email in todo], deadline
            )
            settled = [
                outgoing.settled(message, done, done.results[0] if done.results else None)
                for (message, _), done in zip(todo, delivered, strict=True)
            ]
            await outgoing.store([message for message, _ in settled])
        finally:
            if claim is not None:
                await self._claims.finish(claim, self._clock())
        updated = {m.message_id: m for m, _ in settled}
        return SendResult(
            messages=[updated.get(m.message_id, m) for m in messages],
            errors={m.message_id: e for m, e in settled if e is not None},
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
        items = [BatchItem(email, new_message_id()) for email in plan.emails]
        recorded = await self._outgoing.record(account_id, items, plan.template_id)
        return [recorded[item.message_id] for item in items]
