"""An API send's way into the outgoing pipeline (services/outgoing.py): its recipients
screened by the send policy, its messages recorded, each sent as a batch of one, what
became of them stored; and a request under an Idempotency-Key acts once: replayed when it
succeeded, resumed for what failed, refused while it runs.

The suppression list is read on every call, a retry under an Idempotency-Key included: an
address suppressed since the first try is not mailed by the retry, and a plain send whose
every recipient is suppressed is refused (RecipientSuppressed) with nothing stored."""

from __future__ import annotations

import dataclasses

from leadmail.domain.addresses import email_key
from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import BatchItem
from leadmail.domain.email import Message, new_message_id
from leadmail.domain.idempotency import (
    Claim,
    ClaimState,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    fingerprint,
    new_claim_token,
)
from leadmail.domain.quotas import QuotaExceeded
from leadmail.domain.suppressions import RecipientSuppressed, Suppression
from leadmail.ports.idempotency import IdempotencyStore
from leadmail.ports.messages import MessageRepository
from leadmail.services.addressing import SendPlan
from leadmail.services.outgoing import Outgoing
from leadmail.services.quotas import SendQuota
from leadmail.services.results import SendResult
from leadmail.services.send_policy import SendPolicy


class Outbox:
    def __init__(
        self,
        messages: MessageRepository,
        claims: IdempotencyStore,
        outgoing: Outgoing,
        policy: SendPolicy,
        quota: SendQuota,
        clock: Clock = utc_now,
    ) -> None:
        self._messages = messages
        self._claims = claims
        self._outgoing = outgoing
        self._policy = policy
        self._clock = clock
        self._quota = quota

    async def send(self, account_id: str, plan: SendPlan, key: str | None) -> SendResult:
        """Send what ``plan`` says. The result holds every message; when any failed, its
        failure (DeliveryRejected or DeliveryUnavailable, holding them all) is raised.
        RecipientSuppressed when a plain send has no recipient left to mail, and
        SenderNotAllowed (nothing stored) for a sender the account may not use."""
        # The deadline runs from the request, not from its messages being recorded (which
        # waits its turn behind other requests' on SQLite's one writer), and leaves time
        # to record the outcomes and answer within it.
        deadline = self._outgoing.attempts_deadline()
        first = plan.emails[0]  # every email of a plan has the request's one sender
        await self._policy.allow(account_id, first.sender, first.reply_to)
        quota = self._quota
        if key is None:
            claim = None
            # The quota first: a send that would cross it records nothing.
            taken = await quota.take(account_id, len(plan.emails))
            try:
                plan, messages, withheld = await self._screened_record(account_id, plan)
            except BaseException:
                await quota.give_back(account_id, taken)
                raise
            await quota.give_back(account_id, taken, len(withheld))  # withheld: not sent
        else:
            plan, withheld = await self._screened(account_id, plan)
            held = await self._claim(account_id, plan, key, withheld)
            if isinstance(held, SendResult):
                return held  # a replay
            claim, messages = held
        outgoing = self._outgoing
        try:
            if withheld:  # a retry's messages, recorded before their address was suppressed
                messages = await self._withhold(messages, withheld)
            todo = [
                (message, email)
                for message, email in zip(messages, plan.emails, strict=True)
                if not message.status.settled
            ]
            delivered = await outgoing.deliver_each(
                account_id,
                [BatchItem(email, message.message_id) for message, email in todo],
                deadline,
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

    async def _screened_record(
        self, account_id: str, plan: SendPlan
    ) -> tuple[SendPlan, list[Message], dict[int, Suppression]]:
        """Steps 2 and 1 for a request without a key: its messages recorded unless the
        suppression list holds one of its addresses, in one step (one round trip for a
        plain send); when it does, the plan screened and its messages recorded so."""
        addresses = [box.address for email in plan.emails for box in email.to]
        policy, transactional = self._policy, plan.transactional
        items = [BatchItem(email, new_message_id()) for email in plan.emails]
        pending = self._outgoing.pending(
            account_id, items, plan.template_id, plan.template_version, plan.test
        )
        check = policy.check(account_id, addresses, transactional=transactional)
        entries = await self._messages.add_unless_suppressed(pending, check)
        if not entries:
            return plan, pending, {}
        found = policy.barred(addresses, entries, transactional=transactional)
        plan, withheld = self._screen(plan, found)
        return plan, await self._record(account_id, plan, withheld), withheld

    async def _screened(
        self, account_id: str, plan: SendPlan
    ) -> tuple[SendPlan, dict[int, Suppression]]:
        """Step 2: ``plan`` screened by the suppression list (``_screen``)."""
        found = await self._policy.suppressed(
            account_id,
            [box.address for email in plan.emails for box in email.to],
            transactional=plan.transactional,
        )
        return self._screen(plan, found)

    def _screen(
        self, plan: SendPlan, found: dict[str, Suppression]
    ) -> tuple[SendPlan, dict[int, Suppression]]:
        """``plan`` without the suppressed recipients (``found``) of a plain send (raising
        RecipientSuppressed when none is left), and the messages of a template send that
        are withheld (by place) with the entry that withholds each."""
        if not found:
            return plan, {}
        if not plan.per_recipient:
            [email] = plan.emails
            left = tuple(box for box in email.to if email_key(box.address) not in found)
            if not left:
                raise RecipientSuppressed(box.address for box in email.to)
            return dataclasses.replace(plan, emails=(dataclasses.replace(email, to=left),)), {}
        return plan, {
            n: entry
            for n, email in enumerate(plan.emails)
            if (entry := found.get(email_key(email.to[0].address))) is not None
        }

    async def _withhold(
        self, messages: list[Message], withheld: dict[int, Suppression]
    ) -> list[Message]:
        """``messages`` with those ``withheld`` names (by place) that are not settled yet
        made suppressed, and stored so."""
        now = self._clock()
        changed = {
            n: message.suppressed(withheld[n].why(), now)
            for n, message in enumerate(messages)
            if n in withheld and not message.status.settled
        }
        if not changed:
            return messages
        await self._outgoing.store(list(changed.values()))
        return [changed.get(n, message) for n, message in enumerate(messages)]

    async def _claim(
        self, account_id: str, plan: SendPlan, key: str, withheld: dict[int, Suppression]
    ) -> SendResult | tuple[Claim, list[Message]]:
        """The request under ``key`` taken by this call, with its messages recorded (the
        claim and the messages), or the result of its first run to replay. Messages
        recorded now are counted against the quota (a replay's or a resumed retry's were
        counted the first time)."""
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
            messages = await self._record_counted(account_id, plan, withheld, mine)
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
            and all(m.status.settled for m in messages)
        ):
            return SendResult(messages, replayed=True, per_recipient=plan.per_recipient)
        taken = await self._claims.reclaim(held, new_claim_token(), self._clock())
        if taken is None:
            raise IdempotencyInProgress()
        if not complete:  # the first run died before recording its messages
            messages = await self._record_counted(account_id, plan, withheld, taken)
            await self._claims.attach(taken, [m.message_id for m in messages], self._clock())
        return taken, messages

    async def _record_counted(
        self, account_id: str, plan: SendPlan, withheld: dict[int, Suppression], claim: Claim
    ) -> list[Message]:
        """``_record``, its messages (but those withheld) counted against the quota first;
        over it, ``claim`` is finished with no message (the key may be sent again, and is
        then a new try) and QuotaExceeded raised."""
        quota = self._quota
        try:
            taken = await quota.take(account_id, len(plan.emails) - len(withheld))
        except QuotaExceeded:
            await self._claims.finish(claim, self._clock())
            raise
        try:
            return await self._record(account_id, plan, withheld)
        except BaseException:
            await quota.give_back(account_id, taken)
            raise

    async def _record(
        self, account_id: str, plan: SendPlan, withheld: dict[int, Suppression]
    ) -> list[Message]:
        items = [BatchItem(email, new_message_id()) for email in plan.emails]
        why = {items[n].message_id: entry.why() for n, entry in withheld.items()}
        recorded = await self._outgoing.record(
            account_id, items, plan.template_id, withheld=why,
            template_version=plan.template_version,
            test=plan.test,
        )  # fmt: skip
        return [recorded[item.message_id] for item in items]
