"""The dashboard's users and sessions on Piccolo: rare statements (the CLI's, a sign-in),
and one read per page (the session), so through the query builder and one joined query."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import is_unique_violation, refused, translate_errors
from leadmail.domain.users import Credentials, Session, User, UserExists, new_user_id, user_key
from leadmail.ports.users import UserStore

_REFUSED = "The database refused to store the user"
_SESSION = """
SELECT s.created_at AS session_created_at, s.last_seen_at, u.user_id, u.account_id,
       a.name AS account_name, u.email, u.created_at, u.password_set_at, u.disabled_at
FROM user_sessions s
JOIN users u ON u.user_id = s.user_id
JOIN accounts a ON a.account_id = u.account_id
WHERE s.digest = {}
"""


def _user(row: dict[str, Any]) -> User:
    return User(
        user_id=row["user_id"],
        account_id=row["account_id"],
        account_name=row["account_name"],
        email=row["email"],
        created_at=row["created_at"],
        password_set_at=row["password_set_at"],
        disabled_at=row["disabled_at"],
    )


class PiccoloUserStore(UserStore):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._accounts = database.tables.accounts
        self._users = database.tables.users
        self._sessions = database.tables.user_sessions

    def _select(self) -> Any:
        u = self._users
        return u.select(*u.all_columns(), u.account_id.name.as_alias("account_name"))

    async def _by_email(self, email: str) -> dict[str, Any] | None:
        u = self._users
        with translate_errors():
            row: dict[str, Any] | None = (
                await self._select().where(u.email_key == user_key(email)).first()
            )
        return row

    async def create_user(
        self,
        *,
        account_name: str,
        email: str,
        link_digest: str,
        link_expires_at: datetime,
        now: datetime,
    ) -> User | None:
        a, u = self._accounts, self._users
        with translate_errors():
            account = await a.select(a.account_id).where(a.name == account_name).first()
        if account is None:
            return None
        user = User(new_user_id(), account["account_id"], account_name, email, now, None, None)
        row = u(
            user_id=user.user_id,
            account_id=user.account_id,
            email=email,
            email_key=user_key(email),
            password_hash=None,
            link_digest=link_digest,
            link_expires_at=link_expires_at,
            created_at=now,
            password_set_at=None,
            disabled_at=None,
        )
        with refused(_REFUSED):
            try:
                with translate_errors():
                    async with self._db.writing():
                        await u.insert(row)
            except Exception as e:
                if is_unique_violation(e):
                    raise UserExists(email) from e
                raise
        return user

    async def list_users(self, account_name: str | None = None) -> list[User]:
        u = self._users
        q = self._select()
        if account_name is not None:
            q = q.where(u.account_id.name == account_name)
        with translate_errors():
            rows = await q.order_by(u.created_at, u.user_id)
        return [_user(row) for row in rows]

    async def credentials(self, email: str) -> Credentials | None:
        row = await self._by_email(email)
        return None if row is None else Credentials(_user(row), row["password_hash"])

    async def new_link(self, email: str, link_digest: str, expires_at: datetime) -> User | None:
        u = self._users
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                await u.update({u.link_digest: link_digest, u.link_expires_at: expires_at}).where(
                    u.email_key == user_key(email)
                )
        row = await self._by_email(email)
        return None if row is None else _user(row)

    async def set_password(
        self, link_digest: str, password_hash: str, now: datetime
    ) -> User | None:
        u, s = self._users, self._sessions
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                changed = await (
                    u.update(
                        {
                            u.password_hash: password_hash,
                            u.password_set_at: now,
                            u.link_digest: None,
                            u.link_expires_at: None,
                        }
                    )
                    .where((u.link_digest == link_digest) & (u.link_expires_at > now))
                    .returning(u.user_id)
                )
                if not changed:
                    return None
                user_id = changed[0]["user_id"]
                await s.delete().where(s.user_id == user_id)
            row = await self._select().where(u.user_id == user_id).first()
        return _user(row)

    async def rehash(self, user_id: str, password_hash: str) -> None:
        u = self._users
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                await u.update({u.password_hash: password_hash}).where(u.user_id == user_id)

    async def disable(self, email: str, now: datetime) -> User | None:
        u, s = self._users, self._sessions
        row = await self._by_email(email)
        if row is None:
            return None
        user_id = row["user_id"]
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                await u.update({u.disabled_at: now}).where(
                    (u.user_id == user_id) & u.disabled_at.is_null()
                )
                await s.delete().where(s.user_id == user_id)
        row = await self._by_email(email)
        return None if row is None else _user(row)

    async def start_session(self, digest: str, user_id: str, now: datetime) -> None:
        s = self._sessions
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                await s.insert(s(digest=digest, user_id=user_id, created_at=now, last_seen_at=now))

    async def session(self, digest: str) -> Session | None:
        with translate_errors():
            rows = await self._users.raw(_SESSION, digest)
        if not rows:
            return None
        row = rows[0]
        return Session(_user(row), row["session_created_at"], row["last_seen_at"])

    async def touch_session(self, digest: str, now: datetime) -> None:
        s = self._sessions
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                await s.update({s.last_seen_at: now}).where(s.digest == digest)

    async def end_session(self, digest: str) -> None:
        s = self._sessions
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                await s.delete().where(s.digest == digest)

    async def end_idle_sessions(self, user_id: str, unused_since: datetime) -> int:
        s = self._sessions
        with refused(_REFUSED), translate_errors():
            async with self._db.writing():
                ended = await (
                    s.delete()
                    .where((s.user_id == user_id) & (s.last_seen_at < unused_since))
                    .returning(s.digest)
                )
        return len(ended)
