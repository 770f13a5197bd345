"""The dashboard's users (services/users.py) and sign-in (services/sign_in.py) on the memory
adapters, a real Argon2id hasher at its cheapest, and a clock moved by hand."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import pytest

from leadmail.adapters.limits.requests import request_limiter_from
from leadmail.adapters.memory.installation_secrets import MemoryInstallationSecrets
from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.users import MemoryUserStore
from leadmail.adapters.passwords.argon2 import Argon2PasswordHasher
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.users import (
    SESSION_IDLE,
    SIGN_IN_FAILURES_PER_MINUTE,
    AccountNotFound,
    SetupLinkInvalid,
    SignInRefused,
    SignInThrottled,
    UserExists,
    UserNotFound,
)
from leadmail.services.sign_in import SignIn
from leadmail.services.users import Users
from tests.unit.fakes import FakeClock

PASSWORD = "correct horse battery"
BASE = "https://leads.school.example"


@dataclass
class Rig:
    keys: MemoryApiKeyStore
    store: MemoryUserStore
    hasher: Argon2PasswordHasher
    users: Users
    sign_in: SignIn
    clock: FakeClock

    async def active_user(self, email: str = "ada@school.example") -> str:
        """An active user of account "acme"; its address."""
        invitation = await self.users.create("acme", email)
        await self.users.set_password(secret_of(invitation.link), PASSWORD)
        return email


def secret_of(link: str) -> str:
    return link.rsplit("/", 1)[1]


@pytest.fixture
async def rig() -> Rig:
    keys = MemoryApiKeyStore()
    await keys.create_key(
        account_name="acme", label="", digest="d" * 64, prefix="lm_x", now=FakeClock()()
    )
    store = MemoryUserStore(keys)
    hasher = Argon2PasswordHasher(time_cost=1, memory_kib=64)
    clock = FakeClock()
    failures = request_limiter_from("", SIGN_IN_FAILURES_PER_MINUTE, "sign_in")
    assert failures is not None
    return Rig(
        keys,
        store,
        hasher,
        Users(store, hasher, BASE + "/", clock),
        SignIn(store, hasher, failures, MemoryInstallationSecrets(), clock=clock),
        clock,
    )


# --- invitations and passwords ------------------------------------------------------


async def test_an_invitation_is_a_link_to_set_a_password_whose_digest_is_kept(rig: Rig) -> None:
    invitation = await rig.users.create("acme", "Ada@School.example")

    assert invitation.link.startswith(f"{BASE}/app/password/")
    assert invitation.expires_at == rig.clock.now + timedelta(hours=24)
    assert invitation.user.state == "invited"
    secret = secret_of(invitation.link)
    assert len(secret) >= 43  # 256 bits
    stored = next(iter(rig.store._users.values()))
    assert stored.link_digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in repr(stored)


async def test_an_invitation_needs_an_account_and_a_new_valid_address(rig: Rig) -> None:
    with pytest.raises(AccountNotFound, match="No account named 'nobody'"):
        await rig.users.create("nobody", "ada@school.example")
    with pytest.raises(ValidationFailed, match="`email` is not a valid email address"):
        await rig.users.create("acme", "not an address")
    with pytest.raises(ValidationFailed, match="`account`"):
        await rig.users.create("no spaces allowed", "ada@school.example")
    await rig.users.create("acme", "ada@school.example")
    with pytest.raises(UserExists):
        await rig.users.create("acme", "ADA@school.example")


async def test_a_password_is_at_least_12_characters_and_a_short_one_keeps_the_link(
    rig: Rig,
) -> None:
    invitation = await rig.users.create("acme", "ada@school.example")
    secret = secret_of(invitation.link)

    with pytest.raises(ValidationFailed, match="at least 12 characters, got 11"):
        await rig.users.set_password(secret, "x" * 11)
    user = await rig.users.set_password(secret, "x" * 12)

    assert user.state == "active"
    found = await rig.store.credentials("ada@school.example")
    assert found is not None
    assert found.password_hash is not None
    assert found.password_hash.startswith("$argon2id$")
    assert "x" * 12 not in found.password_hash


async def test_a_link_works_once_and_for_24_hours(rig: Rig) -> None:
    first = await rig.users.create("acme", "ada@school.example")
    await rig.users.set_password(secret_of(first.link), PASSWORD)
    with pytest.raises(SetupLinkInvalid, match="was used, or is more than 24 h old"):
        await rig.users.set_password(secret_of(first.link), PASSWORD)

    late = await rig.users.new_link("ada@school.example")
    rig.clock.advance(timedelta(hours=24))

    with pytest.raises(SetupLinkInvalid):
        await rig.users.set_password(secret_of(late.link), PASSWORD)
    with pytest.raises(UserNotFound):
        await rig.users.new_link("nobody@school.example")


# --- signing in ---------------------------------------------------------------------


async def test_the_right_password_opens_a_session_of_the_users_account(rig: Rig) -> None:
    email = await rig.active_user()

    secret = await rig.sign_in.sign_in(email.upper(), PASSWORD, "10.0.0.1")
    session = await rig.sign_in.session(secret)

    assert session is not None
    assert session.user.email == email
    assert session.user.account_name == "acme"
    assert hashlib.sha256(secret.encode()).hexdigest() in rig.store._sessions
    assert secret not in rig.store._sessions


@pytest.mark.parametrize(
    ("email", "password"),
    [
        ("ada@school.example", "wrong password!"),  # a user, the wrong password
        ("nobody@school.example", PASSWORD),  # no such user
        ("invited@school.example", PASSWORD),  # a user with no password yet
    ],
)
async def test_every_refusal_says_the_same(rig: Rig, email: str, password: str) -> None:
    await rig.active_user()
    await rig.users.create("acme", "invited@school.example")

    with pytest.raises(SignInRefused) as refused:
        await rig.sign_in.sign_in(email, password, "10.0.0.1")

    assert str(refused.value) == "The email address or the password is not right"


async def test_a_disabled_user_cannot_sign_in_and_its_sessions_end(rig: Rig) -> None:
    email = await rig.active_user()
    secret = await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    await rig.users.disable(email)

    assert await rig.sign_in.session(secret) is None
    with pytest.raises(SignInRefused):
        await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")


async def test_five_failures_a_minute_then_throttled_even_with_the_right_password(
    rig: Rig,
) -> None:
    email = await rig.active_user()
    for _ in range(SIGN_IN_FAILURES_PER_MINUTE):
        with pytest.raises(SignInRefused):
            await rig.sign_in.sign_in(email, "wrong password!", "10.0.0.1")

    with pytest.raises(SignInThrottled, match=r"try again in \d+ s") as throttled:
        await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    assert 1 <= throttled.value.retry_after <= 60
    # Another client, or another address from this one, is not held back.
    assert await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.2")
    with pytest.raises(SignInRefused):
        await rig.sign_in.sign_in("other@school.example", "wrong password!", "10.0.0.1")


async def test_successes_are_not_counted(rig: Rig) -> None:
    email = await rig.active_user()

    for _ in range(SIGN_IN_FAILURES_PER_MINUTE + 3):
        assert await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")


async def test_a_session_expires_after_12_hours_idle_and_lives_while_used(rig: Rig) -> None:
    email = await rig.active_user()
    kept = await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")
    idle = await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    for _ in range(3):  # 3 x 5 h: used, so alive after 15 h
        rig.clock.advance(timedelta(hours=5))
        assert await rig.sign_in.session(kept) is not None

    assert await rig.sign_in.session(idle) is None  # 15 h idle
    rig.clock.advance(SESSION_IDLE)
    assert await rig.sign_in.session(kept) is None


async def test_sign_out_ends_the_session_on_the_server(rig: Rig) -> None:
    email = await rig.active_user()
    secret = await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    await rig.sign_in.sign_out(secret)

    assert await rig.sign_in.session(secret) is None
    assert rig.store._sessions == {}


async def test_a_hash_made_with_weaker_parameters_is_remade_on_sign_in(rig: Rig) -> None:
    email = await rig.active_user()
    found = await rig.store.credentials(email)
    assert found is not None
    stronger = Argon2PasswordHasher(time_cost=2, memory_kib=128)
    sign_in = SignIn(
        rig.store, stronger, rig.sign_in._failures, MemoryInstallationSecrets(), clock=rig.clock
    )

    await sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    again = await rig.store.credentials(email)
    assert again is not None
    assert again.password_hash != found.password_hash
    assert not stronger.needs_rehash(again.password_hash or "")


async def test_the_form_key_is_made_once_or_derived_from_the_secret_key(rig: Rig) -> None:
    stored = MemoryInstallationSecrets()
    failures = rig.sign_in._failures
    first = SignIn(rig.store, rig.hasher, failures, stored, clock=rig.clock)
    second = SignIn(rig.store, rig.hasher, failures, stored, clock=rig.clock)
    keyed = SignIn(rig.store, rig.hasher, failures, stored, key=b"k" * 32, clock=rig.clock)

    assert first.form_key is None
    await first.ready()
    await second.ready()
    await keyed.ready()

    assert first.form_key is not None
    assert len(first.form_key) >= 64
    assert second.form_key == first.form_key  # another process on the same database
    assert keyed.form_key not in (None, first.form_key)
    assert b"k" * 32 not in (keyed.form_key or "").encode()


async def test_a_sign_in_clears_its_users_stale_sessions(rig: Rig) -> None:
    email = await rig.active_user()
    forgotten = await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")
    rig.clock.advance(SESSION_IDLE + timedelta(minutes=1))

    await rig.sign_in.sign_in(email, PASSWORD, "10.0.0.1")

    assert len(rig.store._sessions) == 1
    assert await rig.sign_in.session(forgotten) is None
