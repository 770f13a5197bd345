"""The dashboard's users, their password links and their sessions."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from leadmail.domain.users import Credentials, Session, User


class UserStore(Protocol):
    """Raises StorageUnavailable when unreachable. Emails are compared lower-cased."""

    async def create_user(
        self,
        *,
        account_name: str,
        email: str,
        link_digest: str,
        link_expires_at: datetime,
        now: datetime,
    ) -> User | None:
        """A user of the named account, with no password and one password link. None when
        there is no such account; UserExists when a user has this address."""
        ...

    async def list_users(self, account_name: str | None = None) -> list[User]:
        """Users oldest first, all accounts unless one is named."""
        ...

    async def credentials(self, email: str) -> Credentials | None: ...

    async def new_link(self, email: str, link_digest: str, expires_at: datetime) -> User | None:
        """Replace the user's password link (an earlier one stops working). None: no user."""
        ...

    async def set_password(
        self, link_digest: str, password_hash: str, now: datetime
    ) -> User | None:
        """Set the password of the user whose link this is, if the link is unexpired, and
        use the link up; the user's sessions end. None (nothing changed) otherwise."""
        ...

    async def rehash(self, user_id: str, password_hash: str) -> None:
        """Keep a hash of the same password made with today's parameters."""
        ...

    async def disable(self, email: str, now: datetime) -> User | None:
        """Disable the user (idempotent) and end its sessions. None: no such user."""
        ...

    async def start_session(self, digest: str, user_id: str, now: datetime) -> None: ...

    async def session(self, digest: str) -> Session | None:
        """The session and its user (disabled or not), expired or not."""
        ...

    async def touch_session(self, digest: str, now: datetime) -> None: ...

    async def end_session(self, digest: str) -> None:
        """Idempotent."""
        ...

    async def end_idle_sessions(self, user_id: str, unused_since: datetime) -> int:
        """End the user's sessions not used since ``unused_since`` (each sign-in clears
        its user's stale ones, so none piles up); how many."""
        ...
