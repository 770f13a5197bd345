"""ApiKeyService on the memory store, with a fake clock."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import timedelta

import pytest

from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.domain.errors import ApiKeyNotFound, Unauthorized, ValidationFailed
from leadmail.domain.keys import ApiKey, Principal, mint_key
from leadmail.services.keys import ApiKeyService
from tests.unit.fakes import START, FakeClock


async def stored(store: MemoryApiKeyStore, key_id: str) -> ApiKey:
    [key] = [k for k in await store.list_keys() if k.key_id == key_id]
    return key


# --- create -------------------------------------------------------------------------


async def test_create_returns_the_secret_and_stores_only_its_digest(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore
) -> None:
    created = await key_service.create("acme", "laptop")

    key = await stored(key_store, created.key.key_id)
    assert key.digest == hashlib.sha256(created.secret.encode()).hexdigest()
    assert "secret" not in {f.name for f in dataclasses.fields(ApiKey)}
    for field in dataclasses.fields(key):
        value = getattr(key, field.name)
        assert not (isinstance(value, str) and created.secret in value), field.name
    assert created.secret.startswith(key.prefix)
    assert created.secret != key.prefix


async def test_create_records_account_label_and_time(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore
) -> None:
    created = await key_service.create("acme", "  laptop  ")

    key = await stored(key_store, created.key.key_id)
    assert key == created.key
    assert (key.account_name, key.label) == ("acme", "laptop")
    assert key.created_at == START
    assert (key.last_used_at, key.revoked_at) == (None, None)
    assert key.active


async def test_each_create_mints_a_new_secret(key_service: ApiKeyService) -> None:
    first = await key_service.create("acme")
    second = await key_service.create("acme")

    assert first.secret != second.secret
    assert first.key.key_id != second.key.key_id
    assert first.key.account_id == second.key.account_id


async def test_different_account_names_are_different_accounts(key_service: ApiKeyService) -> None:
    acme = await key_service.create("acme")
    globex = await key_service.create("globex")

    assert acme.key.account_id != globex.key.account_id


@pytest.mark.parametrize("name", ["", "-acme", "ac me", "x" * 65])
async def test_create_refuses_a_bad_account_name(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore, name: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        await key_service.create(name)

    assert [e.field for e in caught.value.errors] == ["account"]
    assert await key_store.count_keys() == 0


@pytest.mark.parametrize("label", ["a\nb", "\x00", "l" * 201])
async def test_create_refuses_a_bad_label(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore, label: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        await key_service.create("acme", label)

    assert [e.field for e in caught.value.errors] == ["label"]
    assert await key_store.count_keys() == 0


async def test_any_key_exists(key_service: ApiKeyService) -> None:
    assert not await key_service.any_key_exists()

    await key_service.create("acme")

    assert await key_service.any_key_exists()


async def test_list_is_oldest_first_and_can_name_an_account(
    key_service: ApiKeyService, key_clock: FakeClock
) -> None:
    a1 = await key_service.create("acme")
    key_clock.advance(timedelta(seconds=1))
    g1 = await key_service.create("globex")
    key_clock.advance(timedelta(seconds=1))
    a2 = await key_service.create("acme")

    assert [k.key_id for k in await key_service.list()] == [
        a1.key.key_id,
        g1.key.key_id,
        a2.key.key_id,
    ]
    assert [k.key_id for k in await key_service.list("acme")] == [a1.key.key_id, a2.key.key_id]
    assert await key_service.list("nobody") == []


# --- authenticate -------------------------------------------------------------------


async def test_authenticate_returns_the_keys_account(key_service: ApiKeyService) -> None:
    acme = await key_service.create("acme")
    globex = await key_service.create("globex")

    assert await key_service.authenticate(acme.secret) == Principal(
        account_id=acme.key.account_id, key_id=acme.key.key_id
    )
    assert await key_service.authenticate(globex.secret) == Principal(
        account_id=globex.key.account_id, key_id=globex.key.key_id
    )


async def test_every_active_key_of_an_account_works(key_service: ApiKeyService) -> None:
    created = [await key_service.create("acme", f"key {n}") for n in range(3)]

    principals = [await key_service.authenticate(c.secret) for c in created]

    assert {p.account_id for p in principals} == {created[0].key.account_id}
    assert [p.key_id for p in principals] == [c.key.key_id for c in created]


@pytest.mark.parametrize(
    "secret",
    ["", "lm_", "lm_short", "Bearer lm_" + "a" * 43, "lm_" + "a" * 43 + "\n", "lm_" + "!" * 43],
)
async def test_malformed_key_is_unauthorized(key_service: ApiKeyService, secret: str) -> None:
    await key_service.create("acme")

    with pytest.raises(Unauthorized, match="malformed"):
        await key_service.authenticate(secret)


async def test_key_with_extra_text_is_unauthorized(key_service: ApiKeyService) -> None:
    created = await key_service.create("acme")

    for secret in (created.secret + "x", " " + created.secret, created.secret[:-1]):
        with pytest.raises(Unauthorized):
            await key_service.authenticate(secret)


async def test_unknown_key_is_unauthorized(key_service: ApiKeyService) -> None:
    await key_service.create("acme")

    with pytest.raises(Unauthorized, match="not recognised"):
        await key_service.authenticate(mint_key().secret)


async def test_a_key_differing_only_in_case_is_unauthorized(key_service: ApiKeyService) -> None:
    created = await key_service.create("acme")
    body = created.secret.removeprefix("lm_")
    flipped = "lm_" + body.swapcase()
    assert flipped != created.secret  # 43 random characters always hold a letter

    with pytest.raises(Unauthorized):
        await key_service.authenticate(flipped)


async def test_revoked_key_is_unauthorized_and_others_still_work(
    key_service: ApiKeyService,
) -> None:
    revoked = await key_service.create("acme")
    kept = await key_service.create("acme")

    await key_service.revoke(revoked.key.key_id)

    with pytest.raises(Unauthorized, match="revoked"):
        await key_service.authenticate(revoked.secret)
    assert (await key_service.authenticate(kept.secret)).key_id == kept.key.key_id


async def test_authentication_failures_are_unauthorized_errors(key_service: ApiKeyService) -> None:
    with pytest.raises(Unauthorized) as caught:
        await key_service.authenticate("nope")

    assert caught.value.code == "UNAUTHORIZED"
    assert "nope" not in caught.value.message


# --- revoke -------------------------------------------------------------------------


async def test_revoke_marks_the_key_revoked_at_the_clock(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore, key_clock: FakeClock
) -> None:
    created = await key_service.create("acme")
    revoked_at = key_clock.advance(timedelta(minutes=5))

    key = await key_service.revoke(created.key.key_id)

    assert key.revoked_at == revoked_at
    assert not key.active
    assert await stored(key_store, created.key.key_id) == key


async def test_revoke_is_idempotent_and_keeps_the_first_time(
    key_service: ApiKeyService, key_clock: FakeClock
) -> None:
    created = await key_service.create("acme")
    first = await key_service.revoke(created.key.key_id)
    key_clock.advance(timedelta(hours=1))

    again = await key_service.revoke(created.key.key_id)

    assert again == first
    assert again.revoked_at == START


async def test_revoking_an_unknown_key_is_not_found(key_service: ApiKeyService) -> None:
    with pytest.raises(ApiKeyNotFound) as caught:
        await key_service.revoke("key_missing")

    assert caught.value.key_id == "key_missing"


# --- last_used_at -------------------------------------------------------------------


async def test_first_use_records_last_used_at(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore, key_clock: FakeClock
) -> None:
    created = await key_service.create("acme")
    used_at = key_clock.advance(timedelta(minutes=3))

    await key_service.authenticate(created.secret)

    assert (await stored(key_store, created.key.key_id)).last_used_at == used_at


@pytest.mark.parametrize(
    ("later", "recorded_again"),
    [
        (timedelta(0), False),
        (timedelta(seconds=1), False),
        (timedelta(seconds=59, milliseconds=999), False),
        (timedelta(seconds=60), True),
        (timedelta(hours=5), True),
    ],
)
async def test_last_used_at_moves_at_most_once_a_minute(
    key_service: ApiKeyService,
    key_store: MemoryApiKeyStore,
    key_clock: FakeClock,
    later: timedelta,
    recorded_again: bool,
) -> None:
    created = await key_service.create("acme")
    first_use = key_clock.now
    await key_service.authenticate(created.secret)
    second_use = key_clock.advance(later)

    await key_service.authenticate(created.secret)

    expected = second_use if recorded_again else first_use
    assert (await stored(key_store, created.key.key_id)).last_used_at == expected


async def test_frequent_use_records_one_time_per_minute(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore, key_clock: FakeClock
) -> None:
    created = await key_service.create("acme")
    recorded: list[object] = []
    for _ in range(300):  # every 1.5 s for 7.5 minutes
        await key_service.authenticate(created.secret)
        last = (await stored(key_store, created.key.key_id)).last_used_at
        if not recorded or recorded[-1] != last:
            recorded.append(last)
        key_clock.advance(timedelta(seconds=1.5))

    assert recorded == [START + timedelta(minutes=m) for m in range(8)]


async def test_a_revoked_key_is_not_touched(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore
) -> None:
    created = await key_service.create("acme")
    await key_service.revoke(created.key.key_id)

    with pytest.raises(Unauthorized):
        await key_service.authenticate(created.secret)

    assert (await stored(key_store, created.key.key_id)).last_used_at is None


async def test_a_revoke_for_an_account_leaves_another_accounts_key_alone(
    key_service: ApiKeyService, key_store: MemoryApiKeyStore
) -> None:
    theirs = await key_service.create("other-school")
    mine = await key_service.create("acme")

    with pytest.raises(ApiKeyNotFound):
        await key_service.revoke(theirs.key.key_id, "acme")
    revoked = await key_service.revoke(mine.key.key_id, "acme")

    assert (await stored(key_store, theirs.key.key_id)).active
    assert not revoked.active
