"""Sending email: plain and from templates, recorded before sending, retried within a
deadline, never doubled under one Idempotency-Key."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.delivery import (
    DeliveryError,
    ProviderRejected,
    ProviderUnavailable,
    RetryPolicy,
)
from leadmail.domain.email import (
    Mailbox,
    MessageRecord,
    MessageStatus,
    OutgoingEmail,
    SenderPolicy,
    check_html,
    check_subject,
    new_message_id,
    parse_recipients,
    parse_sender,
)
from leadmail.domain.errors import (
    FieldError,
    LeadmailError,
    MessageNotFound,
    TemplateNotFound,
    ValidationFailed,
)
from leadmail.domain.idempotency import (
    Claim,
    ClaimState,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    check_key,
    fingerprint,
    new_claim_token,
)
from leadmail.domain.templates import Template
from leadmail.ports.mail import MailSender
from leadmail.ports.messages import EmailLog, IdempotencyStore
from leadmail.ports.templates import TemplateCatalog, TemplateRepository

MAX_ERROR_TEXT = 1000
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class PlainEmailRequest:
    to: str | list[str]
    subject: str
    html: str
    sender: str | None = None


@dataclass(frozen=True, slots=True)
class TemplateEmailRequest:
    to: str | list[str]
    template_id: str
    variables: Mapping[str, str] = field(default_factory=dict)
    sender: str | None = None


@dataclass(frozen=True, slots=True)
class SendResult:
    """Every message the request made, in recipient order. ``errors`` holds, for each
    message that failed this time, why."""

    messages: list[MessageRecord]
    errors: dict[str, DeliveryError] = field(default_factory=dict)
    replayed: bool = False
    per_recipient: bool = False  # a template send: one message per recipient

    @property
    def failure(self) -> DeliveryFailed | None:
        if not self.errors:
            return None
        errors = list(self.errors.values())
        if any(isinstance(e, ProviderUnavailable) for e in errors):
            return DeliveryUnavailable(
                self, next(e for e in errors if isinstance(e, ProviderUnavailable))
            )
        return DeliveryRejected(self, errors[0])


class DeliveryFailed(LeadmailError):
    """At least one message was not accepted by the provider. ``result`` has them all."""

    code = "DELIVERY_FAILED"

    def __init__(self, result: SendResult, cause: DeliveryError) -> None:
        failed = len(result.errors)
        total = len(result.messages)
        prefix = "" if total == 1 else f"{failed} of {total} messages failed. "
        super().__init__(prefix + cause.message)
        self.result = result


class DeliveryRejected(DeliveryFailed):
    """The provider refused (4xx): fix the request; retrying as is will not help."""

    code = "PROVIDER_REJECTED"


class DeliveryUnavailable(DeliveryFailed):
    """The provider could not be reached in time: safe to retry with the same
    Idempotency-Key, which sends only what was not sent."""

    code = "PROVIDER_UNAVAILABLE"
    DEFAULT_RETRY_AFTER = 5.0  # seconds, when no provider said how long to wait

    @property
    def retry_after(self) -> float:
        """How long the caller should wait: the longest any provider asked for."""
        asked = [
            e.retry_after
            for e in self.result.errors.values()
            if isinstance(e, ProviderUnavailable) and e.retry_after
        ]
        return max(asked, default=self.DEFAULT_RETRY_AFTER)


@dataclass(frozen=True, slots=True)
class _Planned:
    """What one request will send: one email per message, in order."""

    operation: str
    request: dict[str, Any]
    emails: list[OutgoingEmail]
    template_id: str | None

    @property
    def per_recipient(self) -> bool:
        return self.template_id is not None


class EmailService:
    def __init__(
        self,
        *,
        sender: MailSender,
        log: EmailLog,
        templates: TemplateRepository,
        claims: IdempotencyStore,
        policy: RetryPolicy,
        sender_policy: SenderPolicy,
        default_from: str = "",
        concurrency: int = 50,
        clock: Clock = utc_now,
        sleep: Sleep = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender = sender
        self._log = log
        self._templates = templates
        self._claims = claims
        self._policy = policy
        self._sender_policy = sender_policy
        self._default_from = default_from
        self._concurrency = concurrency
        self._slots: asyncio.Semaphore | None = None
        self._clock = clock
        self._sleep = sleep
        self._monotonic = monotonic

    @property
    def provider(self) -> str:
        return self._sender.provider

    async def list_templates(self) -> list[Template]:
        return await self._templates.list()

    async def get_message(self, account_id: str, message_id: str) -> MessageRecord:
        record = await self._log.get(account_id, message_id)
        if record is None:
            raise MessageNotFound(message_id)
        return record

    async def send(
        self, account_id: str, request: PlainEmailRequest, idempotency_key: str | None = None
    ) -> SendResult:
        """One message to every recipient of ``to``. Raises DeliveryFailed (with every
        message's outcome) when the provider did not accept it."""
        key = None if idempotency_key is None else check_key(idempotency_key)
        errors: list[FieldError] = []
        no_one: tuple[Mailbox, ...] = ()
        to = _collect(errors, lambda: parse_recipients(request.to), no_one)
        subject = _collect(errors, lambda: check_subject(request.subject), "")
        html = _collect(errors, lambda: check_html(request.html), "")
        sender = _collect(errors, lambda: self._sender_of(request.sender), Mailbox(""))
        if errors:
            raise ValidationFailed(errors)
        self._sender_policy.check(sender)
        plan = _Planned(
            operation="send",
            request={
                "to": [m.formatted() for m in to],
                "subject": subject,
                "from": sender.formatted(),
                "html": html,
            },
            emails=[OutgoingEmail(sender=sender, to=to, subject=subject, html=html)],
            template_id=None,
        )
        return _checked(await self._execute(account_id, plan, key))

    async def send_template(
        self, account_id: str, request: TemplateEmailRequest, idempotency_key: str | None = None
    ) -> SendResult:
        """One message per recipient, so recipients never see each other, sent
        concurrently. Raises DeliveryFailed when any was not accepted."""
        key = None if idempotency_key is None else check_key(idempotency_key)
        errors: list[FieldError] = []
        no_one: tuple[Mailbox, ...] = ()
        to = _collect(errors, lambda: parse_recipients(request.to), no_one)
        sender = _collect(errors, lambda: self._sender_of(request.sender), Mailbox(""))
        if errors:
            raise ValidationFailed(errors)
        self._sender_policy.check(sender)
        template = await self._templates.get(request.template_id)
        if template is None:
            raise TemplateNotFound(request.template_id)
        rendered = template.render(request.variables)
        subject = check_subject(rendered.subject)
        used = {name: request.variables[name] for name in template.variables}
        plan = _Planned(
            operation="template",
            request={
                "to": [m.formatted() for m in to],
                "template_id": template.template_id,
                "variables": used,
                "from": sender.formatted(),
            },
            emails=[
                OutgoingEmail(sender=sender, to=(box,), subject=subject, html=rendered.html)
                for box in to
            ],
            template_id=template.template_id,
        )
        return _checked(await self._execute(account_id, plan, key))

    def _sender_of(self, raw: str | None) -> Mailbox:
        text = raw if raw is not None and raw.strip() else self._default_from
        if not text:
            raise ValidationFailed.one(
                "from", "is required (no default sender is configured on this service)"
            )
        return parse_sender(text)

    async def _execute(self, account_id: str, plan: _Planned, key: str | None) -> SendResult:
        if key is None:
            records = await self._record(account_id, plan)
            return await self._deliver_all(plan, records)
        now = self._clock()
        mine = Claim(
            account_id=account_id,
            key=key,
            fingerprint=fingerprint(plan.operation, plan.request),
            token=new_claim_token(),
            state=ClaimState.RUNNING,
            message_ids=(),
            created_at=now,
            updated_at=now,
        )
        held = await self._claims.claim(mine)
        if held.token != mine.token:
            if held.fingerprint != mine.fingerprint:
                raise IdempotencyKeyReused()
            if held.state is ClaimState.RUNNING and not held.stale(now):
                raise IdempotencyInProgress()
            records = await self._log.get_many(account_id, held.message_ids)
            complete = len(records) == len(plan.emails) and len(held.message_ids) == len(records)
            if (
                held.state is ClaimState.FINISHED
                and complete
                and all(r.status is MessageStatus.SENT for r in records)
            ):
                return SendResult(messages=records, replayed=True, per_recipient=plan.per_recipient)
            taken = await self._claims.reclaim(held, new_claim_token(), self._clock())
            if taken is None:
                raise IdempotencyInProgress()
            mine = taken
            if not complete:  # the first run died before recording its messages
                records = await self._record(account_id, plan)
                await self._claims.attach(mine, [r.message_id for r in records], self._clock())
        else:
            records = await self._record(account_id, plan)
            await self._claims.attach(mine, [r.message_id for r in records], self._clock())
        try:
            return await self._deliver_all(plan, records)
        finally:
            await self._claims.finish(mine, self._clock())

    async def _record(self, account_id: str, plan: _Planned) -> list[MessageRecord]:
        now = self._clock()
        records = [
            MessageRecord(
                message_id=new_message_id(),
                account_id=account_id,
                sender=email.sender.formatted(),
                to=tuple(m.formatted() for m in email.to),
                subject=email.subject,
                template_id=plan.template_id,
                status=MessageStatus.PENDING,
                provider=self._sender.provider,
                provider_message_id=None,
                attempts=0,
                last_error="",
                created_at=now,
                updated_at=now,
            )
            for email in plan.emails
        ]
        await self._log.add(records)
        return records

    async def _deliver_all(self, plan: _Planned, records: list[MessageRecord]) -> SendResult:
        deadline = self._monotonic() + self._policy.deadline
        todo = [
            (email, record)
            for email, record in zip(plan.emails, records, strict=True)
            if record.status is not MessageStatus.SENT
        ]
        outcomes = await asyncio.gather(
            *(self._deliver(email, record, deadline) for email, record in todo)
        )
        updated = {record.message_id: record for record, _ in outcomes}
        await self._log.update([record for record, _ in outcomes])
        return SendResult(
            messages=[updated.get(r.message_id, r) for r in records],
            errors={record.message_id: error for record, error in outcomes if error is not None},
            per_recipient=plan.per_recipient,
        )

    async def _deliver(
        self, email: OutgoingEmail, record: MessageRecord, deadline: float
    ) -> tuple[MessageRecord, DeliveryError | None]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._concurrency)
        attempts = record.attempts
        error: DeliveryError
        retry_after: float | None = None
        attempt = 1
        while True:
            remaining = deadline - self._monotonic()
            if remaining <= 0:
                error = ProviderUnavailable("no answer before the delivery deadline")
                break
            attempts += 1
            try:
                async with self._slots, asyncio.timeout(remaining):
                    provider_id = await self._sender.send(email, message_id=record.message_id)
            except TimeoutError:
                error = ProviderUnavailable("no answer before the delivery deadline")
                break
            except ProviderRejected as e:
                error = e
                break
            except ProviderUnavailable as e:
                error = e
                retry_after = e.retry_after
            else:
                sent = replace(
                    record,
                    status=MessageStatus.SENT,
                    provider_message_id=provider_id,
                    attempts=attempts,
                    last_error="",
                    updated_at=self._clock(),
                )
                return sent, None
            attempt += 1
            wait = self._policy.delay_before(attempt, retry_after, deadline - self._monotonic())
            if wait is None:
                break
            await self._sleep(wait)
        failed = replace(
            record,
            status=MessageStatus.FAILED,
            attempts=attempts,
            last_error=error.message[:MAX_ERROR_TEXT],
            updated_at=self._clock(),
        )
        return failed, error


class TemplateService:
    def __init__(
        self, catalog: TemplateCatalog, templates: TemplateRepository, clock: Clock = utc_now
    ) -> None:
        self._catalog = catalog
        self._templates = templates
        self._clock = clock

    async def sync(self) -> int:
        """Store the catalog's templates (idempotent); the number of templates."""
        sources = self._catalog.load()
        await self._templates.sync(sources, self._clock())
        return len(sources)


def _checked(result: SendResult) -> SendResult:
    failure = result.failure
    if failure is not None:
        raise failure
    return result


def _collect(errors: list[FieldError], check: Callable[[], T], fallback: T) -> T:
    """Run one check, keeping its failures, so every bad field is reported at once."""
    try:
        return check()
    except ValidationFailed as e:
        errors.extend(e.errors)
        return fallback
