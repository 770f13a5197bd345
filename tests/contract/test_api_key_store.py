"""The ApiKeyStore contract (ports/keys.py), run against every adapter."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime

from leadmail.domain.keys import ApiKey
from tests.contract.support import (
    T0,
    Storage,
    is_utc,
    moment,
    unique_account_name,
    unique_digest,
)


async def create(
    storage: Storage, account_name: str, *, now: datetime = T0, label: str = "laptop"
) -> ApiKey:
    return await storage.keys.create_key(
        account_name=account_name,
        label=label,
        digest=unique_digest(),
        prefix="lm_abcdefgh",
        now=now,
    )


class TestApiKeyStoreContract:
    # --- create_key ----------------------------------------------------------------------

    async def test_create_key_stores_the_key_of_a_new_account(self, storage: Storage) -> None:
        name, digest = unique_account_name(), unique_digest()

        key = await storage.keys.create_key(
            account_name=name, label="CI runner", digest=digest, prefix="lm_AbC-_xyz", now=T0
        )

        assert key.account_name == name
        assert key.label == "CI runner"
        assert key.digest == digest
        assert key.prefix == "lm_AbC-_xyz"
        assert key.created_at == T0
        assert key.last_used_at is None
        assert key.revoked_at is None
        assert key.active
        assert key.account_id
        assert key.key_id
        assert await storage.keys.find_by_digest(digest) == key

    async def test_create_key_makes_the_account_once_and_reuses_it_by_name(
        self, storage: Storage
    ) -> None:
        name = unique_account_name()

        first = await create(storage, name, now=moment(0))
        second = await create(storage, name, now=moment(1))
        elsewhere = await create(storage, unique_account_name(), now=moment(2))

        assert second.account_id == first.account_id
        assert second.key_id != first.key_id
        assert elsewhere.account_id != first.account_id
        assert await storage.keys.list_keys(name) == [first, second]

    async def test_concurrent_first_keys_of_a_new_account_share_one_account(
        self, storage: Storage
    ) -> None:
        # Two `leadmail keys create` runs (or workers) for one new account at the same time.
        name = unique_account_name()

        keys = await asyncio.gather(*(create(storage, name, now=moment(i)) for i in range(5)))

        assert len({key.account_id for key in keys}) == 1
        assert len({key.key_id for key in keys}) == 5
        assert sorted(k.key_id for k in await storage.keys.list_keys(name)) == sorted(
            k.key_id for k in keys
        )

    # --- find_by_digest ------------------------------------------------------------------

    async def test_find_by_digest_finds_only_that_key(self, storage: Storage) -> None:
        name = unique_account_name()
        one = await create(storage, name)
        two = await create(storage, name)

        assert await storage.keys.find_by_digest(one.digest) == one
        assert await storage.keys.find_by_digest(two.digest) == two
        assert await storage.keys.find_by_digest(unique_digest()) is None
        assert await storage.keys.find_by_digest(one.digest.upper()) is None

    # --- list_keys -----------------------------------------------------------------------

    async def test_list_keys_of_an_account_is_oldest_first_with_its_name(
        self, storage: Storage
    ) -> None:
        name, other = unique_account_name(), unique_account_name()
        newest = await create(storage, name, now=moment(2_000), label="newest")
        oldest = await create(storage, name, now=moment(0), label="oldest")
        await create(storage, other, now=moment(500))
        middle = await create(storage, name, now=moment(1_000), label="middle")

        listed = await storage.keys.list_keys(name)

        assert listed == [oldest, middle, newest]
        assert {key.account_name for key in listed} == {name}
        assert all(is_utc(key.created_at) for key in listed)
        assert listed[0].created_at.isoformat() == "2026-11-22T10:15:30.123000+00:00"

    async def test_list_keys_of_all_accounts_is_oldest_first(self, storage: Storage) -> None:
        one, two = unique_account_name(), unique_account_name()
        made = [
            await create(storage, one, now=moment(30)),
            await create(storage, two, now=moment(10)),
            await create(storage, one, now=moment(20)),
        ]

        listed = await storage.keys.list_keys()

        ours = [key for key in listed if key.key_id in {k.key_id for k in made}]
        assert ours == sorted(made, key=lambda key: key.created_at)
        assert [k.created_at for k in listed] == sorted(k.created_at for k in listed)
        by_id = {key.key_id: key for key in listed}
        assert by_id[made[0].key_id].account_name == one
        assert by_id[made[1].key_id].account_name == two

    async def test_list_keys_of_an_unknown_account_is_empty(self, storage: Storage) -> None:
        await create(storage, unique_account_name())

        assert await storage.keys.list_keys(unique_account_name()) == []

    # --- revoke --------------------------------------------------------------------------

    async def test_revoke_records_the_first_revocation_only(self, storage: Storage) -> None:
        key = await create(storage, unique_account_name())

        revoked = await storage.keys.revoke(key.key_id, moment(1_000))
        again = await storage.keys.revoke(key.key_id, moment(2_000))

        assert revoked == dataclasses.replace(key, revoked_at=moment(1_000))
        assert revoked is not None
        assert not revoked.active
        assert revoked.revoked_at is not None
        assert is_utc(revoked.revoked_at)
        assert again == revoked
        assert await storage.keys.find_by_digest(key.digest) == revoked

    async def test_revoke_leaves_other_keys_active(self, storage: Storage) -> None:
        name = unique_account_name()
        key, sibling = await create(storage, name), await create(storage, name)

        await storage.keys.revoke(key.key_id, moment(1))

        assert await storage.keys.find_by_digest(sibling.digest) == sibling

    async def test_revoke_of_an_unknown_key_is_none(self, storage: Storage) -> None:
        await create(storage, unique_account_name())

        assert await storage.keys.revoke("key_doesnotexist0000", moment(1)) is None

    # --- touch ---------------------------------------------------------------------------

    async def test_touch_records_the_last_use(self, storage: Storage) -> None:
        name = unique_account_name()
        key, sibling = await create(storage, name), await create(storage, name)

        await storage.keys.touch(key.key_id, moment(500))
        first = await storage.keys.find_by_digest(key.digest)
        await storage.keys.touch(key.key_id, moment(900))
        later = await storage.keys.find_by_digest(key.digest)

        assert first == dataclasses.replace(key, last_used_at=moment(500))
        assert later == dataclasses.replace(key, last_used_at=moment(900))
        assert later is not None
        assert later.last_used_at is not None
        assert is_utc(later.last_used_at)
        assert await storage.keys.find_by_digest(sibling.digest) == sibling

    async def test_touch_of_an_unknown_key_changes_nothing(self, storage: Storage) -> None:
        key = await create(storage, unique_account_name())
        before = await storage.keys.count_keys()

        await storage.keys.touch("key_doesnotexist0000", moment(1))

        assert await storage.keys.count_keys() == before
        assert await storage.keys.find_by_digest(key.digest) == key

    # --- count_keys ----------------------------------------------------------------------

    async def test_count_keys_counts_every_key_of_every_account(self, storage: Storage) -> None:
        before = await storage.keys.count_keys()
        one = unique_account_name()

        await create(storage, one)
        await create(storage, one)
        await create(storage, unique_account_name())

        assert await storage.keys.count_keys() == before + 3
