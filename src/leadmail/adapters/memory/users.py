"""The dashboard's users and sessions in memory (accounts are the key store's)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.domain.users import Credentials, Session, User, UserExists, new_user_id, user_key
from leadmail.ports.users import UserStore


@dataclass
class _Stored:
    user: User
    password_hash: str | None = None
    link_digest: str | None = None
    link_expires_at: datetime | None = None


@dataclass(frozen=True)
class _Session:
    user_id: str
    created_at: datetime
    last_seen_at: datetime


class MemoryUserStore(UserStore):
    def __init__(self, keys: MemoryApiKeyStore) -> None:
        self._keys = keys
        self._users: dict[str, _Stored] = {}  # by email key
        self._sessions: dict[str, _Session] = {}

    def _by_id(self, user_id: str) -> _Stored:
        return next(s for s in self._users.values() if s.user.user_id == user_id)

    async def create_user(
        self,
        *,
        account_name: str,
        email: str,
        link_digest: str,
        link_expires_at: datetime,
        now: datetime,
    ) -> User | None:
        account = self._keys.account(account_name)
        if account is None:
            return None
        if user_key(email) in self._users:
            raise UserExists(email)
        user = User(new_user_id(), account.account_id, account.name, email, now, None, None)
        self._users[user_key(email)] = _Stored(user, None, link_digest, link_expires_at)
        return user

    async def list_users(self, account_name: str | None = None) -> list[User]:
        users = [s.user for s in self._users.values()]
        users = [u for u in users if account_name in (None, u.account_name)]
        return sorted(users, key=lambda u: (u.created_at, u.user_id))

    async def credentials(self, email: str) -> Credentials | None:
        stored = self._users.get(user_key(email))
        return None if stored is None else Credentials(stored.user, stored.password_hash)

    async def new_link(self, email: str, link_digest: str, expires_at: datetime) -> User | None:
        stored = self._users.get(user_key(email))
        if stored is None:
            return None
        stored.link_digest, stored.link_expires_at = link_digest, expires_at
        return stored.user

    async def set_password(
        self, link_digest: str, password_hash: str, now: datetime
    ) -> User | None:
        stored = next(
            (
                s
                for s in self._users.values()
                if s.link_digest == link_digest
                and s.link_expires_at is not None
                and s.link_expires_at > now
            ),
            None,
        )
        if stored is None:
            return None
        stored.password_hash = password_hash
        stored.link_digest = stored.link_expires_at = None
        stored.user = replace(stored.user, password_set_at=now)
        self._end_sessions_of(stored.user.user_id)
        return stored.user

    async def rehash(self, user_id: str, password_hash: str) -> None:
        self._by_id(user_id).password_hash = password_hash

    async def disable(self, email: str, now: datetime) -> User | None:
        stored = self._users.get(user_key(email))
        if stored is None:
            return None
        if stored.user.disabled_at is None:
            stored.user = replace(stored.user, disabled_at=now)
        self._end_sessions_of(stored.user.user_id)
        return stored.user

    def _end_sessions_of(self, user_id: str) -> None:
        for digest in [d for d, s in self._sessions.items() if s.user_id == user_id]:
            del self._sessions[digest]

    async def start_session(self, digest: str, user_id: str, now: datetime) -> None:
        self._sessions[digest] = _Session(user_id, now, now)

    async def session(self, digest: str) -> Session | None:
        found = self._sessions.get(digest)
        if found is None:
            return None
        return Session(self._by_id(found.user_id).user, found.created_at, found.last_seen_at)

    async def touch_session(self, digest: str, now: datetime) -> None:
        found = self._sessions.get(digest)
        if found is not None:
            self._sessions[digest] = replace(found, last_seen_at=now)

    async def end_session(self, digest: str) -> None:
        self._sessions.pop(digest, None)

    async def end_idle_sessions(self, user_id: str, unused_since: datetime) -> int:
        stale = [d for d, s in self._sessions.items()
                 if s.user_id == user_id and s.last_seen_at < unused_since]  # fmt: skip
        for digest in stale:
            del self._sessions[digest]
        return len(stale)
