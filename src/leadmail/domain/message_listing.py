"""Listing an account's messages: newest first, a page at a time, by what a school asks of
its message log (to whom, in what state, from which template or campaign, and when)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from leadmail.domain.addresses import email_key
from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.email import Message, MessageStatus, split_named
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageCursor
from leadmail.domain.segments import moment
from leadmail.domain.suppressions import suppression_address
from leadmail.domain.templates import TEMPLATE_ID

T = TypeVar("T")
STATUSES = tuple(status.value for status in MessageStatus)
# Every filter but `status` is served by an index. With `status`, a page walks at most
# this many of the messages the other filters select, and is short (with a cursor to go
# on) when they hold fewer matches: a page's cost never grows with the log.
STATUS_WINDOW = 5_000


def message_addresses(message: Message) -> frozenset[str]:
    """The addresses a message went to, each as ``email_key`` has it (display names
    dropped, case folded): what the ``to`` filter finds it by."""
    return addresses_of(message.to)


def addresses_of(recipients: Iterable[str]) -> frozenset[str]:
    """``message_addresses`` of the formatted recipients a message stores."""
    return frozenset(email_key(_address(formatted)) for formatted in recipients)


def _address(formatted: str) -> str:
    named = split_named(formatted)
    return formatted if named is None else named[1]


@dataclass(frozen=True, slots=True)
class MessageFilter:
    """Which messages a listing holds: those matching every filter given (None: any).

    ``to``: an address as ``email_key`` has it, among a message's recipients.
    ``created_after`` and ``created_before`` are strict."""

    to: str | None = None
    status: MessageStatus | None = None
    template_id: str | None = None
    campaign_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    def matches(self, message: Message) -> bool:
        return (
            (self.to is None or self.to in message_addresses(message))
            and (self.status is None or message.status == self.status)
            and (self.template_id is None or message.template_id == self.template_id)
            and (self.campaign_id is None or message.campaign_id == self.campaign_id)
            and (self.created_after is None or message.created_at > self.created_after)
            and (self.created_before is None or message.created_at < self.created_before)
        )


@dataclass(frozen=True, slots=True)
class MessageQuery:
    """A page of an account's messages: newest first (by ``created_at``, then id),
    ``limit`` of them after the position ``after``, each matching ``filter``."""

    limit: int = DEFAULT_PAGE_SIZE
    after: PageCursor | None = None
    filter: MessageFilter = field(default_factory=MessageFilter)

    @classmethod
    def parse(
        cls,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        to: str | None = None,
        status: str | None = None,
        template_id: str | None = None,
        campaign_id: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
    ) -> MessageQuery:
        """A query from its parameters as sent (None: not given); ValidationFailed naming
        every broken one. An id of the right shape that names no template or campaign of
        the account finds no message, as an address nobody was sent to does."""
        errors: list[FieldError] = []

        def given(name: str, value: str | None, read: Callable[[str], T]) -> T | None:
            if value is None:
                return None
            try:
                return read(value)
            except ValidationFailed as failed:
                errors.extend(failed.errors)
            except ValueError as error:
                errors.append(FieldError(name, str(error)))
            return None

        if not 1 <= limit <= MAX_PAGE_SIZE:
            errors.append(FieldError("limit", f"must be between 1 and {MAX_PAGE_SIZE}"))
        query = cls(
            limit=limit,
            after=given("cursor", cursor, PageCursor.decode),
            filter=MessageFilter(
                to=given("to", to, _recipient),
                status=given("status", status, _status),
                template_id=given(
                    "template_id", template_id, _shaped(TEMPLATE_ID, "a template id")
                ),
                campaign_id=given(
                    "campaign_id", campaign_id, _shaped(CAMPAIGN_ID, "a campaign id")
                ),
                created_after=given("created_after", created_after, moment),
                created_before=given("created_before", created_before, moment),
            ),
        )
        if errors:
            raise ValidationFailed(errors)
        return query


def _shaped(rule: re.Pattern[str], kind: str) -> Callable[[str], str]:
    def read(text: str) -> str:
        if rule.fullmatch(text) is None:
            raise ValueError(f"is not {kind} (`{rule.pattern}`)")
        return text

    return read


def _recipient(text: str) -> str:
    """The address ``to`` names, as ``email_key`` has it (``Name <addr>`` reads as addr).
    Text that is no address finds no message, as the leads' ``email`` filter has it."""
    if "\x00" in text:
        raise ValueError("must not contain NUL characters")
    try:
        return suppression_address(text, "to")
    except ValidationFailed:
        return email_key(text.strip())  # matches nothing stored


def _status(text: str) -> MessageStatus:
    try:
        return MessageStatus(text)
    except ValueError:
        raise ValueError(f"must be one of {', '.join(STATUSES)}") from None


@dataclass(frozen=True, slots=True)
class MessageRows:
    """What a repository found for a query: up to ``limit + 1`` matches, newest first;
    and, when it stopped walking at its window before finding that many, the position of
    the last message it walked (the next page goes on from there)."""

    messages: list[Message]
    walked_to: PageCursor | None = None


@dataclass(frozen=True, slots=True)
class MessagePage:
    messages: list[Message]
    next_cursor: str | None


def page_of(rows: MessageRows, limit: int) -> MessagePage:
    """Cut what a repository found into a page and its cursor: a page of ``limit`` when
    there are more; a shorter one, with a cursor still, when the walk ran out first."""
    found = rows.messages
    if len(found) > limit:
        last = found[limit - 1]
        return MessagePage(found[:limit], PageCursor(last.created_at, last.message_id).encode())
    walked = rows.walked_to
    return MessagePage(found, None if walked is None else walked.encode())
