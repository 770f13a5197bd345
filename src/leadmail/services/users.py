"""The dashboard's users: invited by an operator (`leadmail users create`), who set their
own password through a one-time link, and can be disabled."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.addresses import InvalidAddress
from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.keys import check_account_name
from leadmail.domain.users import (
    SETUP_LINK_LIFETIME,
    AccountNotFound,
    SetupLinkInvalid,
    User,
    UserNotFound,
    check_password,
    new_secret,
    secret_digest,
    user_email,
)
from leadmail.ports.passwords import PasswordHasher
from leadmail.ports.users import UserStore

SETUP_PATH = "/app/password/"  # + the link's secret: the page that sets a password


@dataclass(frozen=True, slots=True)
class Invitation:
    """A user and its password link: ``link`` is shown once, then only its digest is kept."""

    user: User
    link: str
    expires_at: datetime


class Users:
    def __init__(
        self, store: UserStore, hasher: PasswordHasher, link_base: str, clock: Clock = utc_now
    ) -> None:
        self._store = store
        self._hasher = hasher
        self._link_base = link_base.rstrip("/")
        self._clock = clock

    async def create(self, account_name: str, email: str) -> Invitation:
        """Raises AccountNotFound, ValidationFailed (the address), UserExists."""
        try:
            name = check_account_name(account_name)
        except ValueError as e:
            raise ValidationFailed.one("account", str(e)) from e
        address = _address(email)
        secret, now = new_secret(), self._clock()
        expires_at = now + SETUP_LINK_LIFETIME
        user = await self._store.create_user(
            account_name=name,
            email=address,
            link_digest=secret.digest,
            link_expires_at=expires_at,
            now=now,
        )
        if user is None:
            raise AccountNotFound(name)
        return Invitation(user, self._link(secret.value), expires_at)

    async def new_link(self, email: str) -> Invitation:
        """A fresh password link for the user (an earlier one stops working): for a user
        whose link expired, or who forgot the password."""
        address = _address(email)
        secret = new_secret()
        expires_at = self._clock() + SETUP_LINK_LIFETIME
        user = await self._store.new_link(address, secret.digest, expires_at)
        if user is None:
            raise UserNotFound(address)
        return Invitation(user, self._link(secret.value), expires_at)

    async def list(self, account_name: str | None = None) -> list[User]:
        return await self._store.list_users(account_name)

    async def disable(self, email: str) -> User:
        address = _address(email)
        user = await self._store.disable(address, self._clock())
        if user is None:
            raise UserNotFound(address)
        return user

    async def set_password(self, link: str, password: str) -> User:
        """Raises ValidationFailed (the password's rule, checked first: a short password
        does not use the link up) and SetupLinkInvalid."""
        try:
            check_password(password)
        except ValueError as e:
            raise ValidationFailed.one("password", str(e)) from e
        hashed = await self._hasher.hash(password)
        user = await self._store.set_password(secret_digest(link), hashed, self._clock())
        if user is None:
            raise SetupLinkInvalid()
        return user

    def _link(self, secret: str) -> str:
        return f"{self._link_base}{SETUP_PATH}{secret}"


def _address(email: str) -> str:
    try:
        return user_email(email)
    except InvalidAddress as e:
        raise ValidationFailed.one("email", str(e)) from e
