"""What an account holds about one person, and what an erasure leaves of it (GDPR
articles 15 and 17).

A person is named by an address (``DataSubject``): normalised as the suppression list
keeps it (display name dropped, case folded) and its one-way digest
(domain/suppressions.address_digest). An export gathers every record that names the
address; an erasure deletes the lead and, in every record kept for the account's own
history (messages and their events, campaign recipients, import error rows), replaces the
address, with its display name, by the digest, clears the subjects of messages sent to it
and leaves the suppression entry as its digest, so the person is never mailed again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.email import Message
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_imports import RowError
from leadmail.domain.leads import Lead
from leadmail.domain.message_events import MessageEvent
from leadmail.domain.suppressions import Suppression, address_digest, suppression_address


@dataclass(frozen=True, slots=True)
class DataSubject:
    """The person an export or an erasure is about: ``address`` as the suppression list
    keeps it, ``digest`` what an erased record holds instead."""

    address: str
    digest: str

    @classmethod
    def of(cls, raw: str, field: str = "email") -> DataSubject:
        """``Name <addr>`` or ``addr``; ValidationFailed naming ``field`` otherwise."""
        address = suppression_address(raw, field)
        return cls(address, address_digest(address))

    def is_mailbox(self, formatted: str) -> bool:
        """Whether ``formatted`` (``"Name" <addr>`` or ``addr``, as messages keep their
        recipients) is this person's address."""
        try:  # the suppression list's own reading of an address
            return suppression_address(formatted) == self.address
        except ValidationFailed:  # not an address (a digest already): never this person
            return False

    def scrubbed(self, text: str) -> str:
        """``text`` (a provider's bounce detail, an error) with every mention of the
        address, in any case, replaced by the digest."""
        return re.sub(re.escape(self.address), self.digest, text, flags=re.IGNORECASE)


def erased_message(message: Message, person: DataSubject) -> Message:
    """``message`` with the person's recipient entries replaced by the digest, its
    subject cleared (it was written for them) and any mention in its error scrubbed."""
    to = tuple(person.digest if person.is_mailbox(box) else box for box in message.to)
    return replace(message, to=to, subject="", last_error=person.scrubbed(message.last_error))


def erased_event(event: MessageEvent, person: DataSubject) -> MessageEvent:
    return replace(event, detail=person.scrubbed(event.detail))


def erased_recipient(recipient: Recipient, person: DataSubject) -> Recipient:
    return replace(recipient, email=person.digest, error=person.scrubbed(recipient.error))


def erased_row(row: RowError, person: DataSubject) -> RowError:
    return replace(row, email=person.digest, message=person.scrubbed(row.message))


@dataclass(frozen=True, slots=True)
class SentMessage:
    """A message to the person, with what its provider said of it (oldest first)."""

    message: Message
    events: tuple[MessageEvent, ...]


@dataclass(frozen=True, slots=True)
class ImportRow:
    """An import's error row that names the person."""

    import_id: str
    row: RowError


@dataclass(frozen=True, slots=True)
class PersonalData:
    """Everything one account holds about one address (GDPR article 15), newest first
    within each kind. ``suppression`` is the entry under the address's digest: after an
    erasure it is still there, holding the digest instead of the address."""

    person: DataSubject
    lead: Lead | None
    messages: tuple[SentMessage, ...]
    recipients: tuple[Recipient, ...]
    import_rows: tuple[ImportRow, ...]
    suppression: Suppression | None


@dataclass(frozen=True, slots=True)
class Erased:
    """How many records an erasure changed, by kind; all 0 when nothing named the
    address any more (an erasure repeated)."""

    person: DataSubject
    leads: int = 0
    messages: int = 0
    events: int = 0
    campaign_recipients: int = 0
    import_errors: int = 0
    suppressions: int = 0
