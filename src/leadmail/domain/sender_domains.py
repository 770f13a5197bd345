"""Sender identities: the domains an account may send from.

An account with none keeps the service-wide rule (SenderPolicy, domain/email.py); an account
with any may use a ``from`` or ``reply_to`` in those domains only (services/sender_rules.py).
A domain matches exactly: a subdomain is a domain of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.addresses import InvalidAddress, normalise_email

MAX_DOMAIN = 253  # RFC 1035: a host name's length in text
NOT_A_HOST = "is not a host name such as school.example"


@dataclass(frozen=True, slots=True)
class SenderDomain:
    account_id: str
    domain: str  # as check_domain gives it
    created_at: datetime


def check_domain(raw: str) -> str:
    """A sender domain as given (``School.Example``), trimmed and lower-cased: the form a
    sender's ``Mailbox.domain`` takes, so the two compare as text. Raises ValueError saying
    why it is not a host name."""
    text = raw.strip()
    if not text:
        raise ValueError("is required")
    if "@" in text:
        raise ValueError(f"{NOT_A_HOST}: give the part after the @ of an address")
    if len(text) > MAX_DOMAIN:
        raise ValueError(f"must be at most {MAX_DOMAIN} characters")
    if any(c.isspace() or c in "<>[]/\\:" for c in text):
        raise ValueError(NOT_A_HOST)
    # An address in the domain, read by the rule that reads every sender's address: what
    # it accepts and how it spells the domain (case, international names) are then one.
    try:
        address = normalise_email(f"sender@{text}")
    except InvalidAddress as e:
        raise ValueError(f"{NOT_A_HOST}: {_of_a_domain(str(e))}") from e
    return address.rpartition("@")[2]


def _of_a_domain(reason: str) -> str:
    """email-validator's reason, said of the domain rather than of the address it read."""
    reason = reason.removeprefix("is not a valid email address: ")
    for said, meant in _SAID_OF_AN_ADDRESS:
        reason = reason.replace(said, meant)
    return reason


_SAID_OF_AN_ADDRESS = (
    (" immediately after the @-sign", " at its start"),
    ("After the @-sign, periods", "In a domain, periods"),
    ("The part after the @-sign", "The domain"),
    ("An email address", "A domain"),
)
