"""Email address syntax and normalisation.

email-validator is a pure syntax checker here (deliverability checks, which do DNS, are
off), so the domain stays free of I/O while not hand-rolling RFC 5322.

Almost every address a client sends is plain ASCII (``ada.lovelace@example.com``), and for
those email-validator's general machinery (Unicode tables, IDNA remapping) is most of the
cost of checking a lead (bench/README.md). ``_plain`` recognises a strict subset of what
email-validator accepts and normalises it the same way; anything else, and every error
message, still comes from email-validator. tests/unit/test_addresses.py holds the two to
agreement over generated addresses.
"""

from __future__ import annotations

import re

import email_validator
from email_validator import EmailNotValidError, validate_email
from email_validator.rfc_constants import (
    CASE_INSENSITIVE_MAILBOX_NAMES,
    DOMAIN_MAX_LENGTH,
    EMAIL_MAX_LENGTH,
    LOCAL_PART_MAX_LENGTH,
)

MAX_EMAIL_LENGTH = EMAIL_MAX_LENGTH  # 254

# RFC 5322 dot-atom local part @ RFC 1035 host name: ASCII letters, digits and hyphens,
# labels of 1-63 characters that neither start nor end with a hyphen, at least two labels,
# the last one ending with a letter (email-validator's "within a valid top-level domain").
_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~-"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PLAIN = re.compile(
    rf"(?P<local>[{_ATEXT}]+(?:\.[{_ATEXT}]+)*)"
    rf"@(?P<domain>(?:{_LABEL}\.)+{_LABEL})"
)
_CASE_INSENSITIVE = frozenset(CASE_INSENSITIVE_MAILBOX_NAMES)


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
    plain = _plain(text)
    if plain is not None:
        return plain
    try:
        checked = validate_email(text, check_deliverability=False)
    except EmailNotValidError as e:
        raise InvalidAddress(f"is not a valid email address: {e}") from e
    return f"{checked.local_part}@{checked.domain.lower()}"


def _plain(text: str) -> str | None:
    """The normalised address if ``text`` is a plain ASCII address that email-validator
    surely accepts unchanged but for the domain's case; None means "ask email-validator"."""
    match = _PLAIN.fullmatch(text)
    if match is None:
        return None
    local, domain = match["local"], match["domain"].lower()
    if (
        len(local) > LOCAL_PART_MAX_LENGTH
        or len(domain) > DOMAIN_MAX_LENGTH
        or not domain[-1].isalpha()
        or "--" in domain  # punycode (xn--) and the reserved "ab--" labels: the long way
        or local.lower() in _CASE_INSENSITIVE  # postmaster@ and the like get lower-cased
        or _special_use(domain)
    ):
        return None
    return f"{local}@{domain}"


_special: tuple[tuple[str, ...], frozenset[str], tuple[str, ...]] = ((), frozenset(), ())


def _special_use(domain: str) -> bool:
    """email-validator's test: the domain is, or is under, a special-use name."""
    global _special
    # The list is read every time (email-validator documents it as one callers may
    # change); the set and suffixes built from it are rebuilt only when it has changed.
    names = tuple(email_validator.SPECIAL_USE_DOMAIN_NAMES)
    if names != _special[0]:
        _special = (names, frozenset(names), tuple("." + name for name in names))
    return domain in _special[1] or domain.endswith(_special[2])


def email_key(normalised: str) -> str:
    """The form two addresses are compared in: the same mailbox, whatever the case."""
    return normalised.lower()
