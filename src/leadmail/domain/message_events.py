"""What became of a message after the provider took it: the events a provider reports (by
webhook), and the status they move the message to.

A message's status only moves forwards, in this order::

    sent -> delivered -> bounced -> complained

so a late ``delivered`` after a bounce leaves the message bounced, and a complaint (which
comes after delivery) is where it ends. Soft bounces, deferrals, opens and clicks are
recorded and move nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from leadmail.domain.email import MessageStatus
from leadmail.domain.suppressions import SuppressionReason

MAX_EVENT_ID = 512  # Postmark's composed ids (message id, type, time, recipient) fit
MAX_PROVIDER_MESSAGE_ID = 255  # as the messages table keeps it
MAX_DETAIL = 500  # a bounce's diagnostic, a clicked link: cut to this


class EventType(StrEnum):
    DELIVERED = "delivered"
    DEFERRED = "deferred"  # the receiving server said "not now"; the provider retries
    BOUNCED = "bounced"  # hard (permanent) or soft (temporary): ``bounce`` says which
    COMPLAINED = "complained"  # marked as spam
    OPENED = "opened"
    CLICKED = "clicked"


class Bounce(StrEnum):
    HARD = "hard"  # the address does not take mail: never mail it again
    SOFT = "soft"  # a full mailbox, a server refusing for now: recorded only


# The status each status may move to, in order; what is not listed stays where it is
# (pending and failed messages have no provider id for an event to find them by).
_ORDER = (
    MessageStatus.SENT,
    MessageStatus.DELIVERED,
    MessageStatus.BOUNCED,
    MessageStatus.COMPLAINED,
)
_RANK = {status: rank for rank, status in enumerate(_ORDER)}


def _moment(at: datetime) -> datetime:
    """UTC, to the millisecond: what is stored is what the API shows."""
    at = at.astimezone(UTC) if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return at.replace(microsecond=at.microsecond // 1000 * 1000)


def provider_message_key(provider: str, raw: str) -> str:
    """A provider's message id in the one form both its send answer and its events give it:
    without the angle brackets Mailgun's send answer puts around it, and for SendGrid the
    ``X-Message-Id`` alone (its events' ``sg_message_id`` add ``.filter...`` to it)."""
    text = raw.strip()
    if len(text) >= 2 and text[0] == "<" and text[-1] == ">":
        text = text[1:-1].strip()
    if provider == "sendgrid":
        text = text.partition(".filter")[0]
    return text


def stored_forms(key: str) -> tuple[str, str]:
    """The forms a message's stored provider id may have for ``key`` (provider_message_key's
    form): as it is, or in angle brackets (Mailgun's send answer, stored as it came)."""
    return (key, f"<{key}>")


@dataclass(frozen=True, slots=True)
class ProviderEvent:
    """One event as a provider reported it, not yet matched to a message.

    ``event_id`` is the provider's own id of the event (what makes a replay a duplicate),
    ``provider_message_id`` its id of the message in provider_message_key's form, and
    ``recipients`` the addresses the event is about, as the provider wrote them."""

    provider: str
    event_id: str
    provider_message_id: str
    type: EventType
    at: datetime
    detail: str = ""
    bounce: Bounce | None = None  # for BOUNCED only
    recipients: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        provider: str,
        event_id: str,
        provider_message_id: str,
        type_: EventType,
        at: datetime,
        *,
        detail: str = "",
        bounce: Bounce | None = None,
        recipients: tuple[str, ...] = (),
    ) -> ProviderEvent:
        """An event with its ids in their compared form, its moment in UTC to the
        millisecond and its detail on one line, cut to MAX_DETAIL. ValueError for an
        event no message could be found by (an id empty or too long)."""
        key = provider_message_key(provider, provider_message_id)
        if not event_id or len(event_id) > MAX_EVENT_ID:
            raise ValueError("the event has no usable id")
        if not key or len(key) > MAX_PROVIDER_MESSAGE_ID:
            raise ValueError("the event names no usable message id")
        flat = " ".join(detail.replace("\x00", "").split())
        return cls(
            provider, event_id, key, type_, _moment(at), flat[:MAX_DETAIL],
            bounce if type_ is EventType.BOUNCED else None, recipients,
        )  # fmt: skip

    @property
    def suppresses(self) -> SuppressionReason | None:
        """Why the event's recipients go on the account's suppression list: a hard bounce
        or a complaint; None for every other event."""
        if self.type is EventType.COMPLAINED:
            return SuppressionReason.COMPLAINED
        if self.type is EventType.BOUNCED and self.bounce is Bounce.HARD:
            return SuppressionReason.BOUNCED
        return None

    @property
    def moves_to(self) -> MessageStatus | None:
        """The status this event would move a message to; None: it moves nothing."""
        return target_of(self.type, self.bounce)


def target_of(type_: EventType, bounce: Bounce | None) -> MessageStatus | None:
    """The status an event of this type moves a message to; None: it moves nothing."""
    if type_ is EventType.DELIVERED:
        return MessageStatus.DELIVERED
    if type_ is EventType.COMPLAINED:
        return MessageStatus.COMPLAINED
    if type_ is EventType.BOUNCED and bounce is Bounce.HARD:
        return MessageStatus.BOUNCED
    return None


def moves_from(target: MessageStatus) -> tuple[MessageStatus, ...]:
    """The statuses a message may leave for ``target``: those before it in the order."""
    rank = _RANK.get(target)
    return () if rank is None else _ORDER[:rank]


def status_after(current: MessageStatus, target: MessageStatus | None) -> MessageStatus:
    """A message's status once an event that ``moves_to`` ``target`` is applied."""
    if target is not None and current in moves_from(target):
        return target
    return current


@dataclass(frozen=True, slots=True)
class MessageEvent:
    """A provider's event matched to one of our messages: what is stored, and shown with
    the message (GET /api/v1/email/messages/{id})."""

    message_id: str
    account_id: str
    provider: str
    event_id: str
    type: EventType
    bounce: Bounce | None
    at: datetime
    detail: str

    @classmethod
    def of(cls, event: ProviderEvent, message_id: str, account_id: str) -> MessageEvent:
        return cls(
            message_id, account_id, event.provider, event.event_id, event.type,
            event.bounce, event.at, event.detail,
        )  # fmt: skip

    @property
    def moves_to(self) -> MessageStatus | None:
        return target_of(self.type, self.bounce)
