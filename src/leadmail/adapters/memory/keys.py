from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from leadmail.domain.keys import Account, ApiKey, new_account_id, new_key_id
from leadmail.ports.keys import ApiKeyStore


class MemoryApiKeyStore(ApiKeyStore):
    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}
        self._keys: dict[str, ApiKey] = {}

    async def create_key(
        self, *, account_name: str, label: str, digest: str, prefix: str, now: datetime
    ) -> ApiKey:
        account = self._accounts.get(account_name)
        if account is None:
            account = Account(new_account_id(), account_name, now)
            self._accounts[account_name] = account
        key = ApiKey(
            key_id=new_key_id(),
            account_id=account.account_id,
            account_name=account.name,
            label=label,
            prefix=prefix,
            digest=digest,
            created_at=now,
            last_used_at=None,
            revoked_at=None,
        )
        self._keys[key.key_id] = key
        return key

    async def find_by_digest(self, digest: str) -> ApiKey | None:
        return next((k for k in self._keys.values() if k.digest == digest), None)

    async def list_keys(self, account_name: str | None = None) -> list[ApiKey]:
        keys = [k for k in self._keys.values() if account_name in (None, k.account_name)]
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))

    async def revoke(self, key_id: str, now: datetime) -> ApiKey | None:
        key = self._keys.get(key_id)
        if key is None:
            return None
        if key.revoked_at is None:
            key = self._keys[key_id] = replace(key, revoked_at=now)
        return key

    async def touch(self, key_id: str, now: datetime) -> None:
        key = self._keys.get(key_id)
        if key is not None:
            self._keys[key_id] = replace(key, last_used_at=now)

    async def count_keys(self) -> int:
        return len(self._keys)

    def account(self, name: str) -> Account | None:
        """The account of that name (the memory user store's view of the accounts)."""
        return self._accounts.get(name)
