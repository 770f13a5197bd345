"""Email address syntax and normalisation.

email-validator is a pure syntax checker here (deliverability checks, which do DNS, are
off), so the domain stays free of I/O while not hand-rolling RFC 5322.
"""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email

MAX_EMAIL_LENGTH = 254


class InvalidAddress(ValueError):
    """The text is not a usable email address; the message says why."""


def normalise_email(raw: str) -> str:
    """Return the address trimmed, with its domain lower-cased (the local part keeps its case).

    Raises InvalidAddress with a reason a person can act on.
    """
    if "\r" in raw or "\n" in raw:
        raise InvalidAddress("must not contain line breaks")
    text = raw.strip()
    if not text:
        raise InvalidAddress("is required")
    if len(text) > MAX_EMAIL_LENGTH:
        raise InvalidAddress(f"must be at most {MAX_EMAIL_LENGTH} characters")
    try:
        checked = validate_email(text, check_deliverability=False)
    except EmailNotValidError as e:
        raise InvalidAddress(f"is not a valid email address: {e}") from e
    return f"{checked.local_part}@{checked.domain.lower()}"


def email_key(normalised: str) -> str:
    """The form two addresses are compared in: the same mailbox, whatever the case."""
    return normalised.lower()
