"""Send requests as clients make them, checked and turned into a plan: who gets which
message, from whom. Every broken field of a request is reported at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from leadmail.domain.email import (
    Mailbox,
    OutgoingEmail,
    check_html,
    check_subject,
    parse_recipients,
    parse_sender,
)
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.idempotency import check_key

T = TypeVar("T")
_NO_ONE: tuple[Mailbox, ...] = ()
_NO_SENDER = Mailbox("")  # what a broken `from` stands as while the rest is checked
# A plain send is one message: its unsubscribe link can name one recipient only.
ONE_RECIPIENT_ONLY = (
    "needs exactly one address in `to`: an unsubscribe link names one recipient, and a"
    " plain send is one message to them all (send a template email, one message per"
    " recipient, or one request per recipient)"
)


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class PlainEmailRequest:
    to: str | Sequence[str]
    subject: str
    html: str
    sender: str | None = None
    transactional: bool = False  # a receipt and the like: see domain/suppressions.py
    list_unsubscribe: bool = False  # carries the one-click unsubscribe headers
    # The plain-text part: None derives one from the HTML (services/send_email.py), ""
    # sends HTML only, as Resend's API has it.
    text: str | None = None
    reply_to: str | None = None


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class TemplateEmailRequest:
    to: str | Sequence[str]
    template_id: str
    variables: Mapping[str, str] = field(default_factory=dict)
    sender: str | None = None
    transactional: bool = False
    list_unsubscribe: bool = False
    reply_to: str | None = None
    test: bool = False  # a template's test send (services/template_trials.py)


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class SendPlan:
    """What one request will send: one email per message, in order. ``canonical`` gives
    the request in canonical form, what an Idempotency-Key is held to (made only for a
    request that has one)."""

    operation: str
    canonical: Callable[[], dict[str, Any]]
    emails: tuple[OutgoingEmail, ...]
    template_id: str | None = None
    transactional: bool = False
    list_unsubscribe: bool = False
    template_version: int | None = None
    test: bool = False  # a template's test send: marked so in the message log

    @property
    def per_recipient(self) -> bool:
        return self.template_id is not None


class Addressing:
    """Who sends, and to whom: recipients and the sender (or the configured default),
    checked as addresses. Whether the account may use that sender is SenderRules' to say
    (services/sender_rules.py), in the send path."""

    def __init__(self, default_from: str = "") -> None:
        self._default_from = default_from

    def plan_plain(self, request: PlainEmailRequest) -> SendPlan:
        """One message to every recipient of ``to``."""
        errors: list[FieldError] = []
        to = _collect(errors, lambda: parse_recipients(request.to), _NO_ONE)
        subject = _collect(errors, lambda: check_subject(request.subject), "")
        html = _collect(errors, lambda: check_html(request.html), "")
        given = request.text
        text = None if not given else _collect(errors, lambda: check_html(given, "text"), "")
        sender = _collect(errors, lambda: self._sender_of(request.sender), _NO_SENDER)
        reply_to = _collect(errors, lambda: reply_to_of(request.reply_to), None)
        if request.list_unsubscribe and len(to) > 1:
            errors.append(FieldError("list_unsubscribe", ONE_RECIPIENT_ONLY))
        if errors:
            raise ValidationFailed(errors)
        return SendPlan(
            operation="send",
            canonical=lambda: flagged(
                {
                    "to": [m.formatted() for m in to],
                    "subject": subject,
                    "from": sender.formatted(),
                    "html": html,
                    **given_parts(given, reply_to),
                },
                request.transactional,
                request.list_unsubscribe,
            ),
            emails=(
                OutgoingEmail(
                    sender=sender, to=to, subject=subject, html=html, reply_to=reply_to, text=text
                ),
            ),
            transactional=request.transactional,
            list_unsubscribe=request.list_unsubscribe,
        )

    def addresses(
        self, to: str | Sequence[str], sender: str | None, reply_to: str | None = None
    ) -> tuple[tuple[Mailbox, ...], Mailbox, Mailbox | None]:
        """The recipients, the sender and the reply-to address of a request, checked."""
        errors: list[FieldError] = []
        boxes = _collect(errors, lambda: parse_recipients(to), _NO_ONE)
        box = _collect(errors, lambda: self._sender_of(sender), _NO_SENDER)
        replies = _collect(errors, lambda: reply_to_of(reply_to), None)
        if errors:
            raise ValidationFailed(errors)
        return boxes, box, replies

    def sender(self, raw: str | None) -> Mailbox:
        """A ``from`` as sent, or the configured default when there is none: checked
        (ValidationFailed naming ``from``)."""
        return self._sender_of(raw)

    def _sender_of(self, raw: str | None) -> Mailbox:
        text = raw if raw is not None and raw.strip() else self._default_from
        if not text:
            raise ValidationFailed.one(
                "from", "is required (no default sender is configured on this service)"
            )
        return parse_sender(text)


def reply_to_of(raw: str | None) -> Mailbox | None:
    """A ``reply_to`` as sent (ValidationFailed naming it), held to the rules of ``from``."""
    if raw is None:
        return None
    try:
        return parse_sender(raw)
    except ValidationFailed as e:
        raise ValidationFailed([FieldError("reply_to", x.message) for x in e.errors]) from e


def given_parts(text: str | None, reply_to: Mailbox | None) -> dict[str, str]:
    """What a request's canonical form holds of its optional parts: only those it gives
    (a request made before they existed keeps its form, and its Idempotency-Key its
    meaning)."""
    given: dict[str, str] = {}
    if text is not None:
        given["text"] = text
    if reply_to is not None:
        given["reply_to"] = reply_to.formatted()
    return given


def flagged(
    canonical: dict[str, Any], transactional: bool, list_unsubscribe: bool
) -> dict[str, Any]:
    """A request's canonical form with the flags it set (only those: a request made
    before the flags existed keeps its form, and its Idempotency-Key its meaning)."""
    if transactional:
        canonical["transactional"] = True
    if list_unsubscribe:
        canonical["list_unsubscribe"] = True
    return canonical


def checked_key(raw: str | None) -> str | None:
    """An Idempotency-Key header as sent, checked; None when there was none."""
    return None if raw is None else check_key(raw)


def _collect(errors: list[FieldError], check: Callable[[], T], fallback: T) -> T:
    """Run one check, keeping its failures, so every bad field is reported at once."""
    try:
        return check()
    except ValidationFailed as e:
        errors.extend(e.errors)
        return fallback
