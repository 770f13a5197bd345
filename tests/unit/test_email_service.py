"""The send use cases on the memory adapters: recording before sending, retries within a
deadline, idempotency, and the 502/503 split."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.catalog.files import FileTemplateCatalog
from leadmail.adapters.memory.account_templates import MemoryAccountTemplateRepository
from leadmail.adapters.memory.idempotency import MemoryIdempotencyStore
from leadmail.adapters.memory.installation_secrets import MemoryInstallationSecrets
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.quotas import MemoryQuotaRepository
from leadmail.adapters.memory.sender_domains import MemorySenderDomainRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.adapters.memory.templates import MemoryTemplateRepository
from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable, RetryPolicy
from leadmail.domain.email import MessageStatus, OutgoingEmail, SenderNotAllowed, SenderPolicy
from leadmail.domain.errors import MessageNotFound, TemplateNotFound, ValidationFailed
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.templates import TemplateSource
from leadmail.services.addressing import Addressing, PlainEmailRequest, TemplateEmailRequest
from leadmail.services.messages import MessageService
from leadmail.services.outbox import Outbox
from leadmail.services.outgoing import DeliverySettings, Outgoing
from leadmail.services.quotas import SendQuota
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable
from leadmail.services.send_email import SendEmail
from leadmail.services.send_policy import SendPolicy
from leadmail.services.send_template_email import SendTemplateEmail
from leadmail.services.sender_rules import SenderRules
from leadmail.services.suppressions import SuppressionList
from leadmail.services.templates import TemplateService
from leadmail.services.unsubscribes import Unsubscribes

ACCOUNT = "acc_one"
OTHER = "acc_two"
T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
SENDER = "a@b.example.com"

WELCOME = TemplateSource(
    template_id="welcome",
    name="Welcome",
    subject="Welcome to {{ course }}, {{first_name}}",
    body="<p>Hi {{first_name}}, see you at {{course}}.</p>",
)


@dataclass
class Time:
    """A clock, a monotonic clock and a sleep that only advance when slept on."""

    now: float = 0.0
    slept: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return T0 + timedelta(seconds=self.now)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class Rig:
    send: SendEmail
    send_template: SendTemplateEmail
    messages: MessageService
    sender: RecordingEmailProvider
    log: MemoryMessageRepository
    time: Time
    suppressions: MemorySuppressionRepository


async def make_rig(
    *,
    default_from: str = "",
    allowed: frozenset[str] = frozenset(),
    policy: RetryPolicy | None = None,
    sender: RecordingEmailProvider | None = None,
) -> Rig:
    time = Time()
    templates = MemoryTemplateRepository()
    await templates.sync([WELCOME], T0)
    suppressions = MemorySuppressionRepository()
    log = MemoryMessageRepository(suppressions)
    recording = sender if sender is not None else RecordingEmailProvider("test")
    claims = MemoryIdempotencyStore()
    outgoing = Outgoing(
        log,
        recording,
        DeliverySettings(
            retry=policy if policy is not None else RetryPolicy(max_attempts=4, deadline=20.0)
        ),
        clock=time.wall,
        timer=time,
    )
    rules = SenderRules(SenderPolicy(allowed), MemorySenderDomainRepository())
    quota = SendQuota(MemoryQuotaRepository(), time.wall)
    outbox = Outbox(log, claims, outgoing, SendPolicy(suppressions, rules), quota, clock=time.wall)
    addressing = Addressing(default_from)
    service = TemplateService(
        FileTemplateCatalog(None),
        templates,
        MemoryAccountTemplateRepository(),
        clock=time.wall,
    )
    links = Unsubscribes(
        "http://mail.example",
        MemoryInstallationSecrets(),
        SuppressionList(suppressions, time.wall),
        clock=time.wall,
    )
    return Rig(
        SendEmail(addressing, outbox, links),
        SendTemplateEmail(addressing, service, outbox, links),
        MessageService(log, MemoryMessageEventRepository(log)),
        recording,
        log,
        time,
        suppressions,
    )


def plain(
    to: str | list[str] = "ada@example.com", sender: str | None = "School <hi@school.example.com>"
) -> PlainEmailRequest:
    return PlainEmailRequest(to=to, subject="Hello", html="<p>Hi</p>", sender=sender)


def welcome(to: str | list[str]) -> TemplateEmailRequest:
    return TemplateEmailRequest(
        to=to,
        template_id="welcome",
        variables={"first_name": "Ada & <b>", "course": "Python 101"},
        sender="hi@school.example.com",
    )


# --- plain sends ------------------------------------------------------------------------


async def test_a_plain_send_is_recorded_then_sent_once() -> None:
    rig = await make_rig()
    result = await rig.send(ACCOUNT, plain())

    [message] = result.messages
    assert message.status is MessageStatus.SENT
    assert message.provider == "test"
    assert message.provider_message_id == "rec-1"
    assert message.attempts == 1
    assert [d.message_id for d in rig.sender.delivered] == [message.message_id]
    stored = await rig.log.get(ACCOUNT, message.message_id)
    assert stored == message


async def test_the_message_is_in_the_log_before_the_provider_is_called() -> None:
    seen: list[MessageStatus | None] = []

    class Peeking(RecordingEmailProvider):
        async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
            record = await log.get(ACCOUNT, message_id)
            seen.append(None if record is None else record.status)
            return await super().send(email, message_id=message_id)

    rig = await make_rig(sender=Peeking("test"))
    log = rig.log
    await rig.send(ACCOUNT, plain())
    assert seen == [MessageStatus.PENDING]


async def test_several_addresses_make_one_message() -> None:
    rig = await make_rig()
    result = await rig.send(ACCOUNT, plain(to=["a@example.com", "B <b@example.com>"]))

    assert len(result.messages) == 1
    assert [box.address for box in rig.sender.delivered[0].email.to] == [
        "a@example.com",
        "b@example.com",
    ]


async def test_every_invalid_field_is_named_and_nothing_is_recorded() -> None:
    rig = await make_rig()
    with pytest.raises(ValidationFailed) as caught:
        await rig.send(
            ACCOUNT, PlainEmailRequest(to=["ok@example.com", "nope"], subject="a\nb", html=" ")
        )
    fields = {e.field for e in caught.value.errors}
    assert fields == {"to[1]", "subject", "html", "from"}
    assert rig.sender.attempts == 0


async def test_from_defaults_to_the_configured_sender() -> None:
    rig = await make_rig(default_from="Academy <hello@academy.example.com>")
    result = await rig.send(ACCOUNT, plain(sender=None))
    assert result.messages[0].sender == '"Academy" <hello@academy.example.com>'


async def test_no_from_and_no_default_is_refused() -> None:
    rig = await make_rig()
    with pytest.raises(ValidationFailed) as caught:
        await rig.send(ACCOUNT, plain(sender=None))
    assert [e.field for e in caught.value.errors] == ["from"]
    assert rig.sender.attempts == 0


async def test_a_sender_domain_outside_the_allowed_list_is_refused() -> None:
    rig = await make_rig(allowed=frozenset({"academy.example.com"}))
    with pytest.raises(SenderNotAllowed):
        await rig.send(ACCOUNT, plain(sender="x@elsewhere.example.com"))
    assert rig.sender.attempts == 0
    ok = await rig.send(ACCOUNT, plain(sender="x@Academy.Example.COM"))
    assert ok.messages[0].status is MessageStatus.SENT


# --- template sends -----------------------------------------------------------------------


async def test_a_template_send_makes_one_message_per_recipient() -> None:
    rig = await make_rig()
    result = await rig.send_template(
        ACCOUNT, welcome(["a@example.com", "b@example.com", "c@example.com"])
    )

    assert result.per_recipient
    assert [m.to for m in result.messages] == [
        ("a@example.com",),
        ("b@example.com",),
        ("c@example.com",),
    ]
    assert all(len(d.email.to) == 1 for d in rig.sender.delivered)
    email = rig.sender.delivered[0].email
    assert email.subject == "Welcome to Python 101, Ada & <b>"
    assert "Ada &amp; &lt;b&gt;" in email.html
    assert "<b>" not in email.html.replace("<p>", "")
    assert {m.template_id for m in result.messages} == {"welcome"}


async def test_missing_variables_are_all_named_and_nothing_is_sent() -> None:
    rig = await make_rig()
    with pytest.raises(ValidationFailed) as caught:
        await rig.send_template(
            ACCOUNT,
            TemplateEmailRequest(to="a@example.com", template_id="welcome", sender=SENDER),
        )
    assert {e.field for e in caught.value.errors} == {"variables.course", "variables.first_name"}
    assert rig.sender.attempts == 0


async def test_an_unknown_template_sends_nothing() -> None:
    rig = await make_rig()
    with pytest.raises(TemplateNotFound):
        await rig.send_template(
            ACCOUNT, TemplateEmailRequest(to="a@example.com", template_id="nope", sender=SENDER)
        )
    assert rig.sender.attempts == 0


# --- retries ----------------------------------------------------------------------------


async def test_transient_failures_are_retried_with_backoff() -> None:
    rig = await make_rig()
    rig.sender.fail_next(ProviderUnavailable("503"), times=2)

    result = await rig.send(ACCOUNT, plain())

    assert result.messages[0].status is MessageStatus.SENT
    assert result.messages[0].attempts == 3
    assert len(rig.time.slept) == 2
    assert all(0 <= s <= 8.0 for s in rig.time.slept)


async def test_retry_after_is_honoured() -> None:
    rig = await make_rig()
    rig.sender.fail_next(ProviderUnavailable("429", retry_after=3.0))
    await rig.send(ACCOUNT, plain())
    assert rig.time.slept
    assert rig.time.slept[0] >= 3.0


async def test_exhausted_retries_are_503_with_the_outcome_recorded() -> None:
    rig = await make_rig(policy=RetryPolicy(max_attempts=3, deadline=60.0))
    rig.sender.fail_next(ProviderUnavailable("boom"), times=10)

    with pytest.raises(DeliveryUnavailable) as caught:
        await rig.send(ACCOUNT, plain())

    [message] = caught.value.result.messages
    assert message.status is MessageStatus.FAILED
    assert message.attempts == 3
    assert "boom" in message.last_error
    assert await rig.log.get(ACCOUNT, message.message_id) == message


async def test_a_rejection_is_not_retried_and_is_502() -> None:
    rig = await make_rig()
    rig.sender.fail_next(ProviderRejected(422, "Invalid 'To' address"))

    with pytest.raises(DeliveryRejected) as caught:
        await rig.send(ACCOUNT, plain())

    assert rig.sender.attempts == 1
    assert "Invalid 'To' address" in caught.value.message
    assert caught.value.result.messages[0].status is MessageStatus.FAILED


async def test_the_deadline_bounds_all_attempts() -> None:
    rig = await make_rig(policy=RetryPolicy(max_attempts=10, deadline=5.0))
    rig.sender.fail_next(ProviderUnavailable("slow down", retry_after=30.0), times=10)

    with pytest.raises(DeliveryUnavailable):
        await rig.send(ACCOUNT, plain())

    assert rig.sender.attempts == 1  # waiting 30 s would overrun the 5 s deadline
    assert sum(rig.time.slept) <= 5.0


class Hanging(RecordingEmailProvider):
    """Never answers; says each attempt ends within ``bound`` seconds (it does not)."""

    def __init__(self, bound: float | None) -> None:
        super().__init__("hanging")
        self._bound = bound

    @property
    def attempt_timeout(self) -> float | None:
        return self._bound

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        self.attempts += 1
        await asyncio.Event().wait()
        return None


async def test_the_deadline_ends_an_attempt_the_provider_would_not_end_in_time() -> None:
    # An attempt bounded at 10 s, with 0.05 s left of the deadline: the deadline ends it.
    rig = await make_rig(
        policy=RetryPolicy(max_attempts=1, deadline=0.05), sender=Hanging(bound=10.0)
    )

    with pytest.raises(DeliveryUnavailable) as caught:
        await asyncio.wait_for(rig.send(ACCOUNT, plain()), timeout=5)

    assert "no answer before the delivery deadline" in caught.value.message
    assert caught.value.result.messages[0].status is MessageStatus.FAILED


async def test_an_attempt_the_provider_bounds_within_the_deadline_gets_no_timer_of_its_own() -> (
    None
):
    # The provider ends every attempt within 0.01 s and the deadline is 0.1 s away: the
    # provider's bound is trusted, so this one, which does not keep it, is not cut short
    # at the deadline (in the service, HttpEmailProvider's own timer keeps it).
    rig = await make_rig(
        policy=RetryPolicy(max_attempts=1, deadline=0.1), sender=Hanging(bound=0.01)
    )
    sending = asyncio.create_task(rig.send(ACCOUNT, plain()))

    done, _ = await asyncio.wait([sending], timeout=0.4)

    assert not done  # still waiting on the provider, past its bound and the deadline
    assert rig.sender.attempts == 1
    sending.cancel()


# --- idempotency ------------------------------------------------------------------------


async def test_the_same_key_and_body_replays_without_sending_again() -> None:
    rig = await make_rig()
    first = await rig.send(ACCOUNT, plain(), idempotency_key="k-1")
    again = await rig.send(ACCOUNT, plain(), idempotency_key="k-1")

    assert again.replayed
    assert not first.replayed
    assert [m.message_id for m in again.messages] == [m.message_id for m in first.messages]
    assert rig.sender.attempts == 1


async def test_the_same_key_with_another_body_is_a_conflict() -> None:
    rig = await make_rig()
    await rig.send(ACCOUNT, plain(), idempotency_key="k-1")
    with pytest.raises(IdempotencyKeyReused):
        await rig.send(ACCOUNT, plain(to="other@example.com"), idempotency_key="k-1")
    assert rig.sender.attempts == 1


async def test_keys_are_scoped_per_account() -> None:
    rig = await make_rig()
    await rig.send(ACCOUNT, plain(), idempotency_key="k-1")
    other = await rig.send(OTHER, plain(), idempotency_key="k-1")
    assert not other.replayed
    assert rig.sender.attempts == 2


async def test_a_key_still_running_is_a_conflict() -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    class Slow(RecordingEmailProvider):
        async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
            started.set()
            await release.wait()
            return await super().send(email, message_id=message_id)

    rig = await make_rig(sender=Slow("test"))
    first = asyncio.create_task(rig.send(ACCOUNT, plain(), idempotency_key="k-1"))
    await asyncio.wait_for(started.wait(), timeout=5)
    with pytest.raises(IdempotencyInProgress):
        await rig.send(ACCOUNT, plain(), idempotency_key="k-1")
    release.set()
    assert (await first).messages[0].status is MessageStatus.SENT
    assert rig.sender.attempts == 1


async def test_a_retry_after_partial_failure_sends_only_what_failed() -> None:
    rig = await make_rig(policy=RetryPolicy(max_attempts=2, deadline=60.0))
    rig.sender.fail_for("b@example.com", ProviderUnavailable("mailbox busy"))
    request = welcome(["a@example.com", "b@example.com", "c@example.com"])

    with pytest.raises(DeliveryUnavailable) as caught:
        await rig.send_template(ACCOUNT, request, idempotency_key="batch-7")
    statuses = [m.status for m in caught.value.result.messages]
    assert statuses == [MessageStatus.SENT, MessageStatus.FAILED, MessageStatus.SENT]
    assert len(rig.sender.delivered) == 2

    rig.sender.fail_for("b@example.com", None)
    result = await rig.send_template(ACCOUNT, request, idempotency_key="batch-7")

    assert [m.status for m in result.messages] == [MessageStatus.SENT] * 3
    assert [m.message_id for m in result.messages] == [
        m.message_id for m in caught.value.result.messages
    ]
    assert [d.email.to[0].address for d in rig.sender.delivered] == [
        "a@example.com",
        "c@example.com",
        "b@example.com",
    ]
    assert result.messages[1].attempts == 3  # two the first time, one now
    replay = await rig.send_template(ACCOUNT, request, idempotency_key="batch-7")
    assert replay.replayed
    assert len(rig.sender.delivered) == 3


async def test_an_overlong_idempotency_key_is_refused() -> None:
    rig = await make_rig()
    with pytest.raises(ValidationFailed) as caught:
        await rig.send(ACCOUNT, plain(), idempotency_key="k" * 257)
    assert [e.field for e in caught.value.errors] == ["Idempotency-Key"]
    assert rig.sender.attempts == 0


async def test_messages_are_visible_to_their_account_only() -> None:
    rig = await make_rig()
    result = await rig.send(ACCOUNT, plain())
    message_id = result.messages[0].message_id
    assert (await rig.messages.get(ACCOUNT, message_id)).message_id == message_id
    with pytest.raises(MessageNotFound):
        await rig.messages.get(OTHER, message_id)
