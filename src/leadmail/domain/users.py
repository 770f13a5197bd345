"""The people who sign in to the dashboard, and their sessions.

A user belongs to one account and sees only its data. A user is created without a password:
``leadmail users create`` prints a one-time link to set one (valid 24 h). Passwords are
hashed with Argon2id by an adapter (ports/passwords.py); the links' and sessions' secrets,
256 random bits each, are kept as their SHA-256 digests only, as API keys are
(domain/keys.py): a leaked database holds no usable link or session.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from leadmail.domain.addresses import email_key, normalise_email
from leadmail.domain.errors import DomainError

MIN_PASSWORD = 12
# Argon2 hashes any length, but a megabyte of password is a denial of service, not a password.
MAX_PASSWORD = 1024
SETUP_LINK_LIFETIME = timedelta(hours=24)
SESSION_IDLE = timedelta(hours=12)
# A session's last use is written at most this often (not once per page).
SESSION_TOUCH_PRECISION = timedelta(seconds=60)
# Failed sign-ins a minute for one address from one client, then 429 until one expires.
SIGN_IN_FAILURES_PER_MINUTE = 5
_SECRET_BYTES = 32


@dataclass(frozen=True, slots=True)
class User:
    user_id: str
    account_id: str
    account_name: str
    email: str  # as given; compared lower-cased (one user per address, installation-wide)
    created_at: datetime
    password_set_at: datetime | None
    disabled_at: datetime | None

    @property
    def active(self) -> bool:
        return self.disabled_at is None

    @property
    def state(self) -> str:
        if self.disabled_at is not None:
            return "disabled"
        return "active" if self.password_set_at is not None else "invited"


@dataclass(frozen=True, slots=True)
class Credentials:
    """A user and what its password is checked against (None: not set yet)."""

    user: User
    password_hash: str | None


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in user: the account every page of the request shows."""

    user: User
    created_at: datetime
    last_seen_at: datetime

    def expired(self, now: datetime) -> bool:
        return now - self.last_seen_at >= SESSION_IDLE

    def due_touch(self, now: datetime) -> bool:
        return now - self.last_seen_at >= SESSION_TOUCH_PRECISION


@dataclass(frozen=True, slots=True)
class Secret:
    """A fresh link or session secret: ``value`` goes to the user once; ``digest`` is kept."""

    value: str
    digest: str


def new_secret() -> Secret:
    value = secrets.token_urlsafe(_SECRET_BYTES)
    return Secret(value, secret_digest(value))


def secret_digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_user_id() -> str:
    return "usr_" + secrets.token_urlsafe(12)


def user_email(raw: str) -> str:
    """The address a user signs in with, checked as any recipient's (InvalidAddress, a
    ValueError, says what is wrong)."""
    return normalise_email(raw)


def user_key(email: str) -> str:
    """What two users' addresses are compared by: one user per mailbox, whatever the case."""
    return email_key(email.strip())


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"must be at least {MIN_PASSWORD} characters, got {len(password)}")
    if len(password) > MAX_PASSWORD:
        raise ValueError(f"must be at most {MAX_PASSWORD} characters")
    return password


class UserExists(DomainError):
    code = "USER_EXISTS"

    def __init__(self, email: str) -> None:
        super().__init__(f"A user with the address {email!r} already exists")


class AccountNotFound(DomainError):
    """No account by that name (an account is made with its first API key)."""

    code = "ACCOUNT_NOT_FOUND"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"No account named {name!r}")


class UserNotFound(DomainError):
    code = "USER_NOT_FOUND"

    def __init__(self, email: str) -> None:
        super().__init__(f"No user with the address {email!r}")


class SignInRefused(DomainError):
    """The address or the password is wrong, or the user cannot sign in: never which."""

    code = "SIGN_IN_REFUSED"

    def __init__(self) -> None:
        super().__init__("The email address or the password is not right")


class SignInThrottled(DomainError):
    """Too many failed sign-ins for this address from this client: nothing was checked."""

    code = "SIGN_IN_THROTTLED"

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"Too many failed sign-ins ({SIGN_IN_FAILURES_PER_MINUTE} a minute):"
            f" try again in {retry_after} s"
        )


class SetupLinkInvalid(DomainError):
    """The password link is unknown, used, or older than its 24 h."""

    code = "SETUP_LINK_INVALID"

    def __init__(self) -> None:
        hours = int(SETUP_LINK_LIFETIME.total_seconds() // 3600)
        super().__init__(
            f"This link is not valid: it was used, or is more than {hours} h old."
            " Ask for a new one (`leadmail users link`)"
        )
