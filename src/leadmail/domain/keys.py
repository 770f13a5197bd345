"""Accounts and their API keys.

A key is shown once, at creation. Only its SHA-256 digest is kept: a leaked database does
not leak usable keys, and 256 random bits make a plain (unsalted) digest safe to look up.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.text import breaks_line

KEY_PREFIX = "lm_"
KEY_ENTROPY_BYTES = 32
DISPLAY_PREFIX_LENGTH = len(KEY_PREFIX) + 8
ACCOUNT_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_LABEL = 200
_KEY_SHAPE = re.compile(r"^lm_[A-Za-z0-9_-]{43}$")


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    """What is known about a key, never the key itself."""

    key_id: str
    account_id: str
    account_name: str
    label: str
    prefix: str
    digest: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the account every lead and message of the request belongs to."""

    account_id: str
    key_id: str


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly minted key: ``secret`` goes to the user once and is then forgotten."""

    secret: str
    digest: str
    prefix: str


def mint_key() -> NewKey:
    secret = KEY_PREFIX + secrets.token_urlsafe(KEY_ENTROPY_BYTES)
    return NewKey(secret=secret, digest=digest_of(secret), prefix=secret[:DISPLAY_PREFIX_LENGTH])


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def looks_like_key(secret: str) -> bool:
    """Cheap shape check, so garbage never costs a database round trip."""
    return _KEY_SHAPE.fullmatch(secret) is not None


def digests_match(stored: str, presented: str) -> bool:
    return hmac.compare_digest(stored.encode(), presented.encode())


def new_account_id() -> str:
    return "acc_" + secrets.token_urlsafe(12)


def new_key_id() -> str:
    return "key_" + secrets.token_urlsafe(12)


def check_account_name(name: str) -> str:
    if not ACCOUNT_NAME_PATTERN.fullmatch(name):
        raise ValueError(
            "account name must be 1-64 characters: letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return name


def check_label(label: str) -> str:
    if breaks_line(label) or len(label) > MAX_LABEL:
        raise ValueError(f"label must be one line of at most {MAX_LABEL} characters")
    return label.strip()
