"""Email messages: addresses, header safety, recipients, sender policy, delivery states."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import DomainError, FieldError, ValidationFailed
from leadmail.domain.ids import id_rule, new_id
from leadmail.domain.text import BROKEN_LINE, NOT_ONE_LINE, breaks_line

MESSAGE_ID_PREFIX = "msg_"
MESSAGE_ID = id_rule(MESSAGE_ID_PREFIX)
MAX_RECIPIENTS = 50
MAX_SUBJECT = 998  # RFC 5322 line length limit
MAX_DISPLAY_NAME = 200
MAX_LAST_ERROR = 1000  # a message's last_error is cut to this length
MAX_HTML_BYTES = 512 * 1024  # a send's html or text part, a template's html (UTF-8)
# What no address, display name included, may hold: what breaks a line (domain/text.py),
# and tabs.
CONTROL = re.compile(f"\t|{BROKEN_LINE.pattern}")
_QUOTED_PAIR = re.compile(r"\\(.)")
# An at sign, or one that reads as one (fullwidth, small): in a sender's display name it
# makes ``"billing@bank.example" <x@elsewhere.example>`` show as another address.
_AT_SIGN = re.compile("[@\uff20\ufe6b]")
NAME_WITH_AT = (
    "must not have an @ in its display name (a name that reads as an address is how a"
    " spoofed sender hides)"
)


def has_control(text: str) -> bool:
    """Whether ``text`` holds what CONTROL finds. (A printable text holds none of it: the
    check in C answers for almost every text, the expression only for the others.)"""
    return not text.isprintable() and CONTROL.search(text) is not None


def split_named(raw: str) -> tuple[str, str] | None:
    """``Name <address>`` as (name, address), the name's surrounding spaces kept; None
    when ``raw`` is not of that form: optional spaces, a name and an address neither
    holding ``<`` or ``>``, the address in angle brackets and not empty, optional spaces."""
    text = raw.strip()
    if text[-1:] != ">" or text.count("<") != 1 or text.count(">") != 1:
        return None
    name, _, address = text[:-1].partition("<")
    return (name, address) if address else None


class SenderNotAllowed(DomainError):
    """The domain of a ``from`` or ``reply_to`` is not one the account may send from: not
    one of its sender domains, or, for an account with none, not in the service's
    SenderPolicy (services/sender_rules.py)."""

    code = "SENDER_NOT_ALLOWED"


@dataclass(frozen=True, slots=True)
class Mailbox:
    address: str
    name: str = ""

    @classmethod
    def parse(cls, raw: str) -> Mailbox:
        """``ada@example.com`` or ``Ada Lovelace <ada@example.com>``; one line, without
        tabs (domain/text.py): a line break would let a value write mail headers, a
        bidirectional control make the name read as something else."""
        if has_control(raw):
            raise InvalidAddress(NOT_ONE_LINE)
        named = split_named(raw)
        name, address = ("", raw) if named is None else (named[0].strip(), named[1])
        if len(name) >= 2 and name[0] == name[-1] == '"':  # an RFC 5322 quoted-string
            name = _QUOTED_PAIR.sub(r"\1", name[1:-1]).strip()
        elif '"' in name:
            raise InvalidAddress('has a display name with unbalanced quotes (")')
        if len(name) > MAX_DISPLAY_NAME:
            raise InvalidAddress(f"has a display name over {MAX_DISPLAY_NAME} characters")
        return cls(address=normalise_email(address), name=name)

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]

    def formatted(self) -> str:
        if not self.name:
            return self.address
        quoted = self.name.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{quoted}" <{self.address}>'


def parse_recipients(to: str | Sequence[str], field: str = "to") -> tuple[Mailbox, ...]:
    """One address or a list of 1-50; every invalid one is named by its position. An
    address given twice (in any case, with a name or without) is kept once, as first
    given: one person gets one copy."""
    items = [to] if isinstance(to, str) else list(to)
    if not items:
        raise ValidationFailed.one(field, "needs at least one recipient")
    if len(items) > MAX_RECIPIENTS:
        raise ValidationFailed.one(field, f"accepts at most {MAX_RECIPIENTS} recipients")
    errors: list[FieldError] = []
    boxes: list[Mailbox] = []
    for i, raw in enumerate(items):
        where = field if isinstance(to, str) else f"{field}[{i}]"
        try:
            boxes.append(Mailbox.parse(raw))
        except InvalidAddress as e:
            errors.append(FieldError(where, str(e)))
    if errors:
        raise ValidationFailed(errors)
    if len(boxes) == 1:
        return (boxes[0],)
    seen: dict[str, Mailbox] = {}
    for box in boxes:
        seen.setdefault(email_key(box.address), box)
    return tuple(seen.values())


def parse_sender(raw: str, field: str = "from") -> Mailbox:
    """A ``from`` or ``reply_to`` as a client gives it: a Mailbox (ValidationFailed naming
    ``field`` when it is not one) whose display name holds no @ (NAME_WITH_AT)."""
    try:
        box = Mailbox.parse(raw)
    except InvalidAddress as e:
        raise ValidationFailed.one(field, str(e)) from e
    if box.name and _AT_SIGN.search(box.name) is not None:
        raise ValidationFailed.one(field, NAME_WITH_AT)
    return box


def check_subject(subject: str, field: str = "subject") -> str:
    if breaks_line(subject):
        raise ValidationFailed.one(field, NOT_ONE_LINE)
    text = subject.strip()
    if not text:
        raise ValidationFailed.one(field, "is required and must not be blank")
    if len(text) > MAX_SUBJECT:
        raise ValidationFailed.one(field, f"must be at most {MAX_SUBJECT} characters")
    return text


def larger_than(text: str, limit: int) -> bool:
    """``text`` takes more than ``limit`` bytes in UTF-8 (encoded only when it may)."""
    return len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit


def check_html(html: str, field: str = "html") -> str:
    if not html.strip():
        raise ValidationFailed.one(field, "is required and must not be blank")
    if larger_than(html, MAX_HTML_BYTES):
        raise ValidationFailed.one(field, f"is larger than {MAX_HTML_BYTES // 1024} KB (UTF-8)")
    if "\x00" in html:
        raise ValidationFailed.one(field, "must not contain NUL characters")
    return html


@dataclass(frozen=True, slots=True)
class SenderPolicy:
    """Which ``from`` domains may be used; empty means any."""

    allowed_domains: frozenset[str] = frozenset()

    def check(self, sender: Mailbox) -> None:
        allowed = {domain.lower() for domain in self.allowed_domains}
        if allowed and sender.domain not in allowed:
            raise SenderNotAllowed(
                f"Sending from the domain {sender.domain!r} is not allowed on this service"
            )


@dataclass(frozen=True, slots=True)
class OutgoingEmail:
    """One message as a provider will receive it; replies go to ``reply_to`` when set.
    ``headers``: more mail headers, (name, value) in order, each value one line: only the
    service writes them (the one-click unsubscribe headers, domain/unsubscribe.py), never a
    client."""

    sender: Mailbox
    to: tuple[Mailbox, ...]
    subject: str
    html: str
    reply_to: Mailbox | None = None
    headers: tuple[tuple[str, str], ...] = ()
    text: str | None = None  # the plain-text part; None: the provider's own choice (HTML only)


class MessageStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"
    SUPPRESSED = "suppressed"  # never sent: its address is on the suppression list
    # What the provider's events say became of a sent message (domain/message_events.py).
    DELIVERED = "delivered"
    BOUNCED = "bounced"
    COMPLAINED = "complained"

    @property
    def settled(self) -> bool:
        """Nothing more is to be done for it by a send (a retried request skips it): it was
        sent (whatever its provider reported since) or suppressed."""
        return self in _SETTLED


_SETTLED = frozenset(
    {
        MessageStatus.SENT,
        MessageStatus.SUPPRESSED,
        MessageStatus.DELIVERED,
        MessageStatus.BOUNCED,
        MessageStatus.COMPLAINED,
    }
)


def new_message_id() -> str:
    return new_id(MESSAGE_ID_PREFIX)


@dataclass(frozen=True, slots=True)
class Message:
    """One email the service was asked to send (to every address in ``to``) and what
    became of it: recorded before the provider is called."""

    message_id: str
    account_id: str
    sender: str
    to: tuple[str, ...]
    subject: str
    template_id: str | None
    status: MessageStatus
    provider: str
    provider_message_id: str | None
    attempts: int
    last_error: str
    created_at: datetime
    updated_at: datetime
    template_version: int | None = None  # the version of ``template_id`` it was made from
    test: bool = False  # a template's test send (POST /api/v1/email/templates/{id}/test)
    campaign_id: str | None = None  # the campaign it was sent for

    @classmethod
    def pending(
        cls,
        message_id: str,
        account_id: str,
        email: OutgoingEmail,
        template_id: str | None,
        provider: str,
        now: datetime,
        template_version: int | None = None,
        test: bool = False,
        campaign_id: str | None = None,
    ) -> Message:
        """``email``, about to be handed to ``provider``: recorded before it is."""
        return cls(
            message_id, account_id, email.sender.formatted(),
            tuple([box.formatted() for box in email.to]), email.subject, template_id,
            MessageStatus.PENDING, provider, None, 0, "", now, now, template_version, test,
            campaign_id,
        )  # fmt: skip

    def sent(self, provider_message_id: str | None, attempts: int, now: datetime) -> Message:
        """This message, accepted by the provider after ``attempts`` attempts in all."""
        return Message(
            self.message_id, self.account_id, self.sender, self.to, self.subject,
            self.template_id, MessageStatus.SENT, self.provider, provider_message_id,
            attempts, "", self.created_at, now, self.template_version, self.test,
            self.campaign_id,
        )  # fmt: skip

    def suppressed(self, why: str, now: datetime) -> Message:
        """This message, not sent: its address is on the suppression list (``why``)."""
        return Message(
            self.message_id, self.account_id, self.sender, self.to, self.subject,
            self.template_id, MessageStatus.SUPPRESSED, self.provider, None, self.attempts,
            why[:MAX_LAST_ERROR], self.created_at, now, self.template_version, self.test,
            self.campaign_id,
        )  # fmt: skip

    def failed(self, error: str, attempts: int, now: datetime) -> Message:
        """This message, given up on: ``error`` says why (cut to MAX_LAST_ERROR)."""
        return Message(
            self.message_id, self.account_id, self.sender, self.to, self.subject,
            self.template_id, MessageStatus.FAILED, self.provider, self.provider_message_id,
            attempts, error[:MAX_LAST_ERROR], self.created_at, now, self.template_version,
            self.test, self.campaign_id,
        )  # fmt: skip
