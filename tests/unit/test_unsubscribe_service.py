"""Unsubscribes (services/unsubscribes.py) on the memory adapters: each recipient's link
and headers, the key (configured, or made once and kept), and the unsubscribe itself."""

from __future__ import annotations

import pytest

from leadmail.adapters.memory.installation_secrets import MemoryInstallationSecrets
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.suppressions import SuppressionReason, address_digest
from leadmail.domain.unsubscribe import UnsubscribeTarget, UnsubscribeTokenInvalid, read_token
from leadmail.services.suppressions import SuppressionList
from leadmail.services.unsubscribes import KEY_NAME, Unsubscribes
from tests.unit.fakes import FakeClock

KEY = b"unit-test-unsubscribe-key-0123456789"
BASE = "https://mail.school.example"


def service(
    key: bytes | None = KEY,
    stored: MemoryInstallationSecrets | None = None,
    suppressions: MemorySuppressionRepository | None = None,
) -> Unsubscribes:
    clock = FakeClock()
    listed = SuppressionList(suppressions or MemorySuppressionRepository(), clock)
    return Unsubscribes(
        BASE + "/", stored or MemoryInstallationSecrets(), listed, key=key, clock=clock
    )


def token_of(url: str) -> str:
    assert url.startswith(f"{BASE}/u/")
    return url.removeprefix(f"{BASE}/u/")


async def test_each_recipient_has_a_link_of_its_own_signed_with_the_key() -> None:
    links = service()
    await links.ready()

    url = links.url("acc_1", "Ada <Ada@Example.com>")

    assert read_token(KEY, token_of(url)) == UnsubscribeTarget("acc_1", "ada@example.com")
    assert links.url("acc_1", "grace@example.com") != url
    assert links.url("acc_2", "ada@example.com") != url
    assert links.headers("acc_1", "ada@example.com") == (
        ("List-Unsubscribe", f"<{url}>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
    )


async def test_a_configured_key_is_used_and_nothing_is_stored() -> None:
    stored = MemoryInstallationSecrets()
    links = service(stored=stored)
    await links.ready()

    assert await stored.keep(KEY_NAME, "x" * 40, FakeClock()()) == "x" * 40  # none was there


async def test_without_a_key_one_is_made_once_and_kept_for_every_process() -> None:
    stored = MemoryInstallationSecrets()
    first, second = service(None, stored), service(None, stored)
    await first.ready()
    await second.ready()
    await first.ready()  # again: nothing changes

    url = first.url("acc_1", "ada@example.com")

    assert second.url("acc_1", "ada@example.com") == url
    # A process with another database's key does not accept it.
    elsewhere = service(None)
    await elsewhere.ready()
    with pytest.raises(UnsubscribeTokenInvalid):
        await elsewhere.target(token_of(url))


async def test_no_link_is_made_before_the_key_is_loaded() -> None:
    with pytest.raises(RuntimeError, match="ready"):
        service(None).url("acc_1", "ada@example.com")


async def test_unsubscribing_puts_the_address_on_that_accounts_list_only() -> None:
    suppressions = MemorySuppressionRepository()
    links = service(suppressions=suppressions)
    await links.ready()
    token = token_of(links.url("acc_1", "Ada@Example.com"))

    entry = await links.unsubscribe(token)
    again = await links.unsubscribe(token)  # a second click: harmless

    assert (entry.account_id, entry.email, entry.reason) == (
        "acc_1",
        "ada@example.com",
        SuppressionReason.UNSUBSCRIBED,
    )
    assert again == entry
    assert (entry.message_id, entry.campaign_id) == (None, None)
    digest = address_digest("ada@example.com")
    assert await suppressions.get("acc_2", digest) is None


async def test_an_address_that_bounced_stays_bounced_when_it_unsubscribes() -> None:
    suppressions = MemorySuppressionRepository()
    links = service(suppressions=suppressions)
    listed = SuppressionList(suppressions, FakeClock())
    await listed.record("acc_1", "ada@example.com", SuppressionReason.BOUNCED)
    await links.ready()

    entry = await links.unsubscribe(token_of(links.url("acc_1", "ada@example.com")))

    assert entry.reason is SuppressionReason.BOUNCED


async def test_a_bad_token_unsubscribes_no_one() -> None:
    suppressions = MemorySuppressionRepository()
    links = service(suppressions=suppressions)
    other = service(b"another-installation-key-0123456789")
    await other.ready()
    foreign = token_of(other.url("acc_1", "ada@example.com"))

    for bad in (foreign, "not-a-token", foreign[:-2]):
        with pytest.raises(UnsubscribeTokenInvalid):
            await links.unsubscribe(bad)
    assert await suppressions.get("acc_1", address_digest("ada@example.com")) is None
