from __future__ import annotations

from datetime import datetime
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import translate_errors
from leadmail.adapters.db.statements import Mapped, plain_statement
from leadmail.adapters.db.tables import ApiKeys
from leadmail.domain.keys import ApiKey, new_account_id, new_key_id
from leadmail.ports.keys import ApiKeyStore

KEYS_CHANNEL = "leadmail_api_keys"
# A key's row, and its account's name from a join (_select).
KEYS = Mapped(ApiKeys, ApiKey, joined=["account_name"])


_NEW_ACCOUNT = plain_statement(
    'INSERT INTO "accounts" ("account_id", "name", "created_at") VALUES (%s, %s, %s)'
    ' ON CONFLICT ("name") DO NOTHING'
)


class PiccoloApiKeyStore(ApiKeyStore):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._accounts = database.tables.accounts
        self._keys = database.tables.api_keys

    async def create_key(
        self, *, account_name: str, label: str, digest: str, prefix: str, now: datetime
    ) -> ApiKey:
        a, k = self._accounts, self._keys
        with translate_errors():
            async with self._db.transaction():
                # Two first keys for one new account at once must share it: insert if
                # absent, then read whichever row won.
                # (The columns named: the others, a quota, take the table's defaults.)
                await self._db.execute(_NEW_ACCOUNT, new_account_id(), account_name, now)
                row = await a.select(a.account_id).where(a.name == account_name).first()
                account_id = row["account_id"]
                key_id = new_key_id()
                await k.insert(
                    k(
                        key_id=key_id,
                        account_id=account_id,
                        label=label,
                        prefix=prefix,
                        digest=digest,
                        created_at=now,
                        last_used_at=None,
                        revoked_at=None,
                    )
                )
        return ApiKey(
            key_id=key_id,
            account_id=account_id,
            account_name=account_name,
            label=label,
            prefix=prefix,
            digest=digest,
            created_at=now,
            last_used_at=None,
            revoked_at=None,
        )

    def _select(self) -> Any:
        k = self._keys
        return k.select(*k.all_columns(), k.account_id.name.as_alias("account_name"))

    async def find_by_digest(self, digest: str) -> ApiKey | None:
        with translate_errors():
            row = await self._select().where(self._keys.digest == digest).first()
        return None if row is None else KEYS.from_row(row)

    async def list_keys(self, account_name: str | None = None) -> list[ApiKey]:
        k = self._keys
        q = self._select()
        if account_name is not None:
            q = q.where(k.account_id.name == account_name)
        with translate_errors():
            rows = await q.order_by(k.created_at, k.key_id)
        return [KEYS.from_row(row) for row in rows]

    async def revoke(self, key_id: str, now: datetime) -> ApiKey | None:
        k = self._keys
        async with self._db.writing():
            with translate_errors():
                await k.update({k.revoked_at: now}).where(
                    (k.key_id == key_id) & k.revoked_at.is_null()
                )
                if self._db.kind == "postgres":
                    # Servers caching keys (key_cache.py) evict it on this notice.
                    await k.raw("SELECT pg_notify({}, {})", KEYS_CHANNEL, key_id)
        with translate_errors():
            row = await self._select().where(k.key_id == key_id).first()
        return None if row is None else KEYS.from_row(row)

    async def touch(self, key_id: str, now: datetime) -> None:
        k = self._keys
        async with self._db.writing():
            with translate_errors():
                await k.update({k.last_used_at: now}).where(k.key_id == key_id)

    async def count_keys(self) -> int:
        with translate_errors():
            return int(await self._keys.count())
