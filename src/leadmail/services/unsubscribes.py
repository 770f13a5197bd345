"""Use case: one-click unsubscribe (RFC 8058). Each recipient's own link and headers, made
for every campaign message and every API send that asks for them, and the unsubscribe
itself, done by whoever holds a link (no API key: a mail client's POST).

The signing key is LEADMAIL_SECRET_KEY when set; otherwise one made on the first start and
kept in the database (InstallationSecrets), so links stay valid across restarts and every
process on the database signs alike."""

from __future__ import annotations

import secrets

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.suppressions import Suppression, SuppressionReason
from leadmail.domain.unsubscribe import (
    UnsubscribeTarget,
    check_key,
    make_token,
    read_token,
    unsubscribe_headers,
    unsubscribe_url,
)
from leadmail.ports.installation_secrets import InstallationSecrets
from leadmail.services.suppressions import SuppressionList

# The name the generated key is kept under (installation_secrets.name).
KEY_NAME = "unsubscribe_key"


class Unsubscribes:
    """``public_url``: the base of every link (LEADMAIL_PUBLIC_URL, or where ``serve``
    listens); ``key``: LEADMAIL_SECRET_KEY's bytes, or None to use the database's."""

    def __init__(
        self,
        public_url: str,
        stored: InstallationSecrets,
        suppressions: SuppressionList,
        key: bytes | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self._base = public_url.rstrip("/")
        self._stored = stored
        self._suppressions = suppressions
        self._key = None if key is None else check_key(key)
        self._clock = clock

    @property
    def public_url(self) -> str:
        return self._base

    async def ready(self) -> None:
        """Load the signing key (making and keeping one on the database's first start, when
        none is configured); at once when it is loaded. Every send that makes links calls
        it first; the server and worker at start."""
        if self._key is None:
            kept = await self._stored.keep(KEY_NAME, secrets.token_urlsafe(48), self._clock())
            self._key = check_key(kept.encode())

    def _signing_key(self) -> bytes:
        if self._key is None:
            raise RuntimeError("Unsubscribes.ready() was not awaited before making a link")
        return self._key

    def url(self, account_id: str, address: str) -> str:
        """The link that unsubscribes ``address`` from ``account_id``'s mail (the template
        variable ``unsubscribe_url``). ValidationFailed for what is no address."""
        return unsubscribe_url(self._base, make_token(self._signing_key(), account_id, address))

    def headers(self, account_id: str, address: str) -> tuple[tuple[str, str], ...]:
        """``List-Unsubscribe`` and ``List-Unsubscribe-Post`` for that link."""
        return unsubscribe_headers(self.url(account_id, address))

    async def target(self, token: str) -> UnsubscribeTarget:
        """Who ``token`` unsubscribes, its signature checked (no lookup);
        UnsubscribeTokenInvalid for a token not signed with this installation's key."""
        await self.ready()
        return read_token(self._signing_key(), token)

    async def unsubscribe(self, token: str) -> Suppression:
        """Put the token's address on its account's suppression list as ``unsubscribed``
        (a stronger entry there stays: SuppressionList.record's rule); again is harmless.
        UnsubscribeTokenInvalid as ``target``."""
        target = await self.target(token)
        return await self._suppressions.record(
            target.account_id, target.address, SuppressionReason.UNSUBSCRIBED
        )
