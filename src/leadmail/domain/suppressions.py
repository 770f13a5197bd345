"""The suppression list: addresses an account must not mail, and why.

One entry per address and account, stored by its *digest* (``address_digest``): the
address normalised (display name dropped, case folded) and hashed. Every check compares
digests, so an entry whose address was erased (GDPR article 17: the address itself
replaced by its digest) still keeps that person from being mailed again.

The digest is SHA-256 of the normalised address under a fixed prefix, not keyed by the
installation's secret: a rotated secret must never make the list forget anyone. It is a
one-way form, not a secret one (an address guessed can be checked against it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.email import split_named
from leadmail.domain.errors import DomainError, ValidationFailed
from leadmail.domain.lead_listing import PageCursor

DIGEST_PREFIX = "sha256:"
_SALT = b"leadmail-suppression:"


class SuppressionReason(StrEnum):
    UNSUBSCRIBED = "unsubscribed"  # the person asked (one-click unsubscribe)
    BOUNCED = "bounced"  # the provider reported a hard bounce
    COMPLAINED = "complained"  # the person marked a message as spam
    MANUAL = "manual"  # the account added it

    @property
    def binding(self) -> bool:
        """Holds even for a transactional send (a receipt, a password reset): an address
        that bounces or complains is never mailed; one that unsubscribed from marketing,
        or that the account put on the list, still gets what it asked for."""
        return self in (SuppressionReason.BOUNCED, SuppressionReason.COMPLAINED)

    def outranks(self, other: SuppressionReason) -> bool:
        """Whether an entry for this reason replaces one for ``other``: a binding reason
        replaces one that is not; otherwise the first entry stays."""
        return self.binding and not other.binding


# What a client may add itself; the others come from the service (unsubscribe links,
# provider webhooks).
CLIENT_REASONS = frozenset({SuppressionReason.MANUAL})


class SuppressionNotFound(DomainError):
    code = "SUPPRESSION_NOT_FOUND"

    def __init__(self, email: str) -> None:
        super().__init__(f"{email!r} is not on the suppression list")
        self.email = email


class RecipientSuppressed(DomainError):
    """Every recipient of a send is on the account's suppression list: nothing was stored
    or sent."""

    code = "RECIPIENT_SUPPRESSED"

    def __init__(self, addresses: Iterable[str]) -> None:
        self.addresses = tuple(addresses)
        named = ", ".join(self.addresses)
        super().__init__(
            f"Every recipient is on this account's suppression list ({named}): nothing was sent"
        )


def suppression_address(raw: str, field: str = "email") -> str:
    """The address an entry is kept under: ``Name <addr>`` or ``addr``, display name
    dropped, normalised and case-folded. ValidationFailed naming ``field`` otherwise."""
    named = split_named(raw)
    text = named[1] if named is not None else raw
    try:
        return email_key(normalise_email(text))
    except InvalidAddress as e:
        raise ValidationFailed.one(field, str(e)) from e


def address_digest(address: str) -> str:
    """The digest of an address as ``suppression_address`` gives it (already normalised)."""
    return DIGEST_PREFIX + hashlib.sha256(_SALT + address.encode()).hexdigest()


def is_digest(text: str) -> bool:
    return text.startswith(DIGEST_PREFIX)


@dataclass(frozen=True, slots=True)
class SuppressionCheck:
    """What a send asks of an account's suppression list: which of these digests are on
    it, counting only the entries that bind a transactional send when it is one."""

    account_id: str
    digests: tuple[str, ...]
    transactional: bool = False


@dataclass(frozen=True, slots=True)
class Suppression:
    """One address an account must not mail. ``email`` is the normalised address, or its
    digest once erased; ``digest`` is what every check compares. ``message_id`` and
    ``campaign_id`` say where it came from, when it came from a message or a campaign."""

    account_id: str
    email: str
    digest: str
    reason: SuppressionReason
    created_at: datetime
    message_id: str | None = None
    campaign_id: str | None = None

    @classmethod
    def of(
        cls,
        account_id: str,
        address: str,
        reason: SuppressionReason,
        now: datetime,
        *,
        message_id: str | None = None,
        campaign_id: str | None = None,
    ) -> Suppression:
        """An entry for ``address`` (as ``suppression_address`` gives it)."""
        return cls(
            account_id, address, address_digest(address), reason, now, message_id, campaign_id
        )

    def erased(self) -> Suppression:
        """This entry with its address replaced by its digest (it still suppresses)."""
        return Suppression(
            self.account_id, self.digest, self.digest, self.reason, self.created_at,
            self.message_id, self.campaign_id,
        )  # fmt: skip

    def why(self) -> str:
        """What a message not sent for this entry says (its ``last_error``)."""
        return f"not sent: the address is on this account's suppression list ({self.reason})"

    def holds(self, transactional: bool) -> bool:
        """Whether this entry stops a send (``transactional``: a receipt and the like)."""
        return self.reason.binding or not transactional


@dataclass(frozen=True, slots=True)
class Added:
    """What adding an entry left: the entry now stored, and whether this add wrote it (a
    new entry, or one replacing an entry whose reason it outranks) rather than finding one
    that stays. (Not told by comparing entries: two adds in one millisecond are equal.)"""

    entry: Suppression
    written: bool


# A page's cursor is the leads' (domain/lead_listing.py): <microseconds since 1970>.<id>,
# the id the first 40 hex digits of the last entry's digest. As a position it falls just
# before that digest (a prefix sorts first), so the page after it starts with the next
# entry: two digests alike in 160 bits are not expected.
CURSOR_DIGITS = 40


def encode_cursor(entry: Suppression) -> str:
    hexes = entry.digest.removeprefix(DIGEST_PREFIX)[:CURSOR_DIGITS]
    return PageCursor(entry.created_at, hexes).encode()


# A lead listing's cursor has that shape too (lead_listing.CURSOR); this one is narrower.
CURSOR = re.compile(f"^[0-9]{{1,17}}\\.[0-9a-f]{{{CURSOR_DIGITS}}}$")
MAX_CURSOR_LENGTH = 17 + 1 + CURSOR_DIGITS


def decode_cursor(token: str) -> tuple[datetime, str]:
    """The (created_at, digest) position a cursor names; ValidationFailed naming
    ``cursor`` for a text not of a cursor's shape (a lead listing's cursor included)."""
    if CURSOR.fullmatch(token) is None:
        raise ValidationFailed.one("cursor", "is not a cursor this service issued")
    position = PageCursor.decode(token)
    return position.created_at, DIGEST_PREFIX + position.lead_id
