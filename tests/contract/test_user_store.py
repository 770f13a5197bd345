"""The UserStore contract (ports/users.py), run against every adapter: users of an account,
their one-time password links and their sessions."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from leadmail.domain.users import UserExists, new_secret
from tests.contract.support import T0, Storage, is_utc, moment, unique_address

DAY = timedelta(hours=24)


async def _account_name(storage: Storage) -> str:
    account = await storage.new_account()
    [key] = [k for k in await storage.keys.list_keys() if k.account_id == account]
    return key.account_name


async def _invited(storage: Storage, email: str | None = None) -> tuple[str, str, str]:
    """A new user of a new account: (its account name, its address, its link's digest)."""
    name = await _account_name(storage)
    address = email or unique_address()
    link = new_secret()
    user = await storage.users.create_user(
        account_name=name, email=address, link_digest=link.digest, link_expires_at=T0 + DAY, now=T0
    )
    assert user is not None
    return name, address, link.digest


class TestUserStoreContract:
    async def test_a_new_user_is_invited_with_no_password(self, storage: Storage) -> None:
        name, address, _ = await _invited(storage)

        [user] = await storage.users.list_users(name)

        assert (user.email, user.account_name, user.state) == (address, name, "invited")
        assert user.created_at == T0
        assert is_utc(user.created_at)
        found = await storage.users.credentials(address.upper())  # any case
        assert found is not None
        assert found.user == user
        assert found.password_hash is None

    async def test_a_user_of_no_account_is_not_made(self, storage: Storage) -> None:
        made = await storage.users.create_user(
            account_name="no-such-account",
            email=unique_address(),
            link_digest=new_secret().digest,
            link_expires_at=T0 + DAY,
            now=T0,
        )

        assert made is None

    async def test_an_address_has_one_user_across_accounts(self, storage: Storage) -> None:
        _, address, _ = await _invited(storage)
        other = await _account_name(storage)

        with pytest.raises(UserExists, match="already exists"):
            await storage.users.create_user(
                account_name=other,
                email=address.upper(),
                link_digest=new_secret().digest,
                link_expires_at=T0 + DAY,
                now=T0,
            )
        assert await storage.users.list_users(other) == []

    async def test_a_link_sets_the_password_once(self, storage: Storage) -> None:
        _, address, link = await _invited(storage)

        user = await storage.users.set_password(link, "argon2-hash", moment(1_000))
        again = await storage.users.set_password(link, "another-hash", moment(2_000))

        assert user is not None
        assert (user.state, user.password_set_at) == ("active", moment(1_000))
        assert again is None  # used up
        found = await storage.users.credentials(address)
        assert found is not None
        assert found.password_hash == "argon2-hash"

    async def test_an_expired_link_sets_nothing(self, storage: Storage) -> None:
        _, address, link = await _invited(storage)

        assert await storage.users.set_password(link, "argon2-hash", T0 + DAY) is None
        found = await storage.users.credentials(address)
        assert found is not None
        assert found.password_hash is None

    async def test_a_new_link_replaces_the_old_one(self, storage: Storage) -> None:
        _, address, old = await _invited(storage)
        new = new_secret().digest

        user = await storage.users.new_link(address, new, T0 + 2 * DAY)

        assert user is not None
        assert await storage.users.set_password(old, "h1", moment(1)) is None
        assert await storage.users.set_password(new, "h2", T0 + DAY) is not None
        assert await storage.users.new_link(unique_address(), new, T0 + DAY) is None

    async def test_a_session_is_found_touched_and_ended(self, storage: Storage) -> None:
        _, _, link = await _invited(storage)
        user = await storage.users.set_password(link, "h", moment(1))
        assert user is not None
        digest = new_secret().digest

        await storage.users.start_session(digest, user.user_id, moment(10))
        started = await storage.users.session(digest)
        await storage.users.touch_session(digest, moment(70_000))
        touched = await storage.users.session(digest)
        await storage.users.end_session(digest)
        await storage.users.end_session(digest)  # idempotent

        assert started is not None
        assert started.user == user
        assert (started.created_at, started.last_seen_at) == (moment(10), moment(10))
        assert is_utc(started.last_seen_at)
        assert touched is not None
        assert touched.last_seen_at == moment(70_000)
        assert await storage.users.session(digest) is None
        assert await storage.users.session(new_secret().digest) is None

    async def test_disabling_a_user_ends_its_sessions(self, storage: Storage) -> None:
        _, address, link = await _invited(storage)
        user = await storage.users.set_password(link, "h", moment(1))
        assert user is not None
        digests = [new_secret().digest for _ in range(2)]
        for digest in digests:
            await storage.users.start_session(digest, user.user_id, moment(2))

        disabled = await storage.users.disable(address, moment(3))
        again = await storage.users.disable(address, moment(4))

        assert disabled is not None
        assert (disabled.state, disabled.disabled_at) == ("disabled", moment(3))
        assert again == disabled  # the first time kept
        assert [await storage.users.session(d) for d in digests] == [None, None]
        assert await storage.users.disable(unique_address(), moment(5)) is None

    async def test_a_new_password_ends_the_sessions(self, storage: Storage) -> None:
        _, address, link = await _invited(storage)
        user = await storage.users.set_password(link, "h", moment(1))
        assert user is not None
        digest = new_secret().digest
        await storage.users.start_session(digest, user.user_id, moment(2))
        relink = new_secret().digest
        await storage.users.new_link(address, relink, moment(3) + DAY)

        await storage.users.set_password(relink, "h2", moment(4))

        assert await storage.users.session(digest) is None

    async def test_a_rehash_keeps_the_new_hash(self, storage: Storage) -> None:
        _, address, link = await _invited(storage)
        user = await storage.users.set_password(link, "old", moment(1))
        assert user is not None

        await storage.users.rehash(user.user_id, "new")

        found = await storage.users.credentials(address)
        assert found is not None
        assert found.password_hash == "new"

    async def test_users_are_listed_by_account_oldest_first(self, storage: Storage) -> None:
        name = await _account_name(storage)
        addresses = [unique_address() for _ in range(3)]
        for i, address in enumerate(addresses):
            await storage.users.create_user(
                account_name=name,
                email=address,
                link_digest=new_secret().digest,
                link_expires_at=T0 + DAY,
                now=moment(3 - i),
            )
        other, _, _ = await _invited(storage)

        listed = await storage.users.list_users(name)
        everyone = await storage.users.list_users()

        assert [u.email for u in listed] == addresses[::-1]
        assert {u.account_name for u in everyone} >= {name, other}

    async def test_two_invitations_of_one_address_at_once_make_one_user(
        self, storage: Storage
    ) -> None:
        name = await _account_name(storage)
        address = unique_address()

        results = await asyncio.gather(
            *(
                storage.users.create_user(
                    account_name=name,
                    email=address,
                    link_digest=new_secret().digest,
                    link_expires_at=T0 + DAY,
                    now=T0,
                )
                for _ in range(3)
            ),
            return_exceptions=True,
        )

        assert sum(not isinstance(r, BaseException) for r in results) == 1
        assert all(isinstance(r, UserExists) for r in results if isinstance(r, BaseException))
        assert len(await storage.users.list_users(name)) == 1


async def test_idle_sessions_of_a_user_are_ended_and_the_others_kept(storage: Storage) -> None:
    _, _, link = await _invited(storage)
    user = await storage.users.set_password(link, "h", moment(1))
    assert user is not None
    _, _, other_link = await _invited(storage)
    other = await storage.users.set_password(other_link, "h", moment(1))
    assert other is not None
    stale, fresh, theirs = (new_secret().digest for _ in range(3))
    await storage.users.start_session(stale, user.user_id, moment(10))
    await storage.users.start_session(fresh, user.user_id, moment(5_000))
    await storage.users.start_session(theirs, other.user_id, moment(10))

    ended = await storage.users.end_idle_sessions(user.user_id, moment(1_000))

    assert ended == 1
    assert await storage.users.session(stale) is None
    assert await storage.users.session(fresh) is not None
    assert await storage.users.session(theirs) is not None  # another user's: not this one's
