from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ApiKeyNotFound, Unauthorized, ValidationFailed
from leadmail.domain.keys import (
    ApiKey,
    Principal,
    check_account_name,
    check_label,
    digest_of,
    digests_match,
    looks_like_key,
    mint_key,
)
from leadmail.ports.keys import ApiKeyStore

# Recording every use would turn each read into a write; a minute's precision is plenty.
LAST_USED_PRECISION = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class CreatedKey:
    key: ApiKey
    secret: str


class ApiKeyService:
    """Issue, list, revoke and check API keys."""

    def __init__(self, store: ApiKeyStore, clock: Clock = utc_now) -> None:
        self._store = store
        self._clock = clock

    async def create(self, account_name: str, label: str = "") -> CreatedKey:
        """Mint a key for the account (created if new). The secret is returned once."""
        try:
            name = check_account_name(account_name)
        except ValueError as e:
            raise ValidationFailed.one("account", str(e)) from e
        try:
            text = check_label(label)
        except ValueError as e:
            raise ValidationFailed.one("label", str(e)) from e
        minted = mint_key()
        key = await self._store.create_key(
            account_name=name,
            label=text,
            digest=minted.digest,
            prefix=minted.prefix,
            now=self._clock(),
        )
        return CreatedKey(key=key, secret=minted.secret)

    async def list(self, account_name: str | None = None) -> list[ApiKey]:
        return await self._store.list_keys(account_name)

    async def revoke(self, key_id: str, account_name: str | None = None) -> ApiKey:
        """``account_name``: only a key of that account (the dashboard's; another
        account's key is not found). ApiKeyNotFound."""
        if account_name is not None:
            own = {key.key_id for key in await self._store.list_keys(account_name)}
            if key_id not in own:
                raise ApiKeyNotFound(key_id)
        key = await self._store.revoke(key_id, self._clock())
        if key is None:
            raise ApiKeyNotFound(key_id)
        return key

    async def any_key_exists(self) -> bool:
        return await self._store.count_keys() > 0

    async def authenticate(self, secret: str) -> Principal:
        """Who holds this key. Raises Unauthorized for unknown or revoked keys."""
        if not looks_like_key(secret):
            raise Unauthorized("The API key is malformed")
        digest = digest_of(secret)
        key = await self._store.find_by_digest(digest)
        if key is None or not digests_match(key.digest, digest):
            raise Unauthorized("The API key is not recognised")
        if not key.active:
            raise Unauthorized("The API key has been revoked")
        now = self._clock()
        if key.last_used_at is None or now - key.last_used_at >= LAST_USED_PRECISION:
            await self._store.touch(key.key_id, now)
        return Principal(key.account_id, key.key_id)
