"""Signing in to the dashboard, and the sessions it opens.

The session's secret goes to the browser in a cookie; only its digest is stored, so a
session ends on the server (sign-out, a disabled user, a new password) whatever the
browser keeps. Failed sign-ins are counted per address and client: past the limit, the
password is not even checked. The answer to a failure never says whether the address has
a user (a missing user costs the time of a password check too).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.users import (
    SESSION_IDLE,
    Session,
    SignInRefused,
    SignInThrottled,
    new_secret,
    secret_digest,
    user_key,
)
from leadmail.ports.installation_secrets import InstallationSecrets
from leadmail.ports.passwords import PasswordHasher
from leadmail.ports.request_limits import RequestLimiter
from leadmail.ports.users import UserStore

# The name the generated form key is kept under (installation_secrets.name).
FORM_KEY_NAME = "dashboard_form_key"


class SignIn:
    """``failures``: a budget of SIGN_IN_FAILURES_PER_MINUTE per address and client.
    ``stored``, ``key``: where the dashboard's form key comes from: derived from
    LEADMAIL_SECRET_KEY's bytes when set, else made on the first start and kept in the
    database (as the unsubscribe links' key is), so every process accepts every form."""

    def __init__(
        self,
        store: UserStore,
        hasher: PasswordHasher,
        failures: RequestLimiter,
        stored: InstallationSecrets,
        key: bytes | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self._store = store
        self._hasher = hasher
        self._failures = failures
        self._stored = stored
        self._clock = clock
        self._form_key = (
            None if key is None else hmac.new(key, b"dashboard forms", hashlib.sha256).hexdigest()
        )

    async def ready(self) -> None:
        """Load the form key (made and kept on the database's first start); at start."""
        if self._form_key is None:
            self._form_key = await self._stored.keep(
                FORM_KEY_NAME, secrets.token_urlsafe(48), self._clock()
            )

    @property
    def form_key(self) -> str | None:
        """What the dashboard's CSRF tokens are signed with; None before ``ready``."""
        return self._form_key

    async def sign_in(self, email: str, password: str, client: str) -> str:
        """The new session's secret. Raises SignInThrottled or SignInRefused."""
        bucket = f"{user_key(email)}|{client}"
        allowance = await self._failures.peek(bucket)
        if not allowance.allowed:
            raise SignInThrottled(max(1, math.ceil(allowance.reset_after)))
        found = await self._store.credentials(email.strip())
        if found is None or found.password_hash is None:
            await self._hasher.burn(password)
            ok = False
        else:
            ok = await self._hasher.verify(found.password_hash, password)
        if found is None or not ok or not found.user.active:
            await self._failures.hit(bucket)
            raise SignInRefused()
        assert found.password_hash is not None  # (verified against it)
        if self._hasher.needs_rehash(found.password_hash):
            await self._store.rehash(found.user.user_id, await self._hasher.hash(password))
        secret, now = new_secret(), self._clock()
        await self._store.end_idle_sessions(found.user.user_id, now - SESSION_IDLE)
        await self._store.start_session(secret.digest, found.user.user_id, now)
        return secret.value

    async def session(self, secret: str) -> Session | None:
        """The live session this secret opens, its last use recorded (at most once a
        minute); None for an unknown, expired or ended one, or a disabled user's."""
        digest = secret_digest(secret)
        session = await self._store.session(digest)
        now = self._clock()
        if session is None or not session.user.active:
            return None
        if session.expired(now):
            await self._store.end_session(digest)
            return None
        if session.due_touch(now):
            await self._store.touch_session(digest, now)
        return session

    async def sign_out(self, secret: str) -> None:
        await self._store.end_session(secret_digest(secret))
