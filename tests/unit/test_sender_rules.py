"""SenderRules (services/sender_rules.py): an account's sender domains, else the service's
policy; the domains read through a cache that a change outlives by at most MAX_AGE_S, timed
on a fake monotonic clock. And SenderDomainService, which manages them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from leadmail.adapters.memory.sender_domains import MemorySenderDomainRepository
from leadmail.domain.email import Mailbox, SenderNotAllowed, SenderPolicy
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.sender_domains import SenderDomain
from leadmail.ports.errors import StorageUnavailable
from leadmail.services.sender_domains import SenderDomainService
from leadmail.services.sender_rules import MAX_AGE_S, SenderRules
from tests.unit.fakes import START, FakeClock

ACCOUNT, OTHER = "acc_one", "acc_two"


def box(raw: str) -> Mailbox:
    return Mailbox.parse(raw)


@dataclass
class Seconds:
    """A monotonic clock that moves only when told."""

    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Domains(MemorySenderDomainRepository):
    """The memory repository, counting its reads; a read may be held open (``gate``),
    take time on the clock (``takes``) or fail (``failing``)."""

    clock: Seconds = field(default_factory=Seconds)
    reads: int = 0
    takes: float = 0.0
    gate: asyncio.Event | None = None
    failing: bool = False

    def __post_init__(self) -> None:
        super().__init__()

    async def list(self, account_id: str) -> list[SenderDomain]:
        self.reads += 1
        found = await super().list(account_id)  # what is stored when the read begins
        if self.gate is not None:
            await self.gate.wait()
        self.clock.now += self.takes
        if self.failing:
            raise StorageUnavailable()
        return found

    async def given(self, account_id: str, *domains: str) -> None:
        for domain in domains:
            await self.add(account_id, domain, START)


def rules_on(domains: Domains, policy: SenderPolicy | None = None) -> SenderRules:
    return SenderRules(policy or SenderPolicy(), domains, monotonic=domains.clock)


# --- the rule ---------------------------------------------------------------------------


async def test_an_account_without_domains_keeps_the_services_policy() -> None:
    domains = Domains()
    await domains.given(OTHER, "other.example")
    anyone = rules_on(domains)
    listed = rules_on(domains, SenderPolicy(frozenset({"school.example"})))

    await anyone.check(ACCOUNT, box("ops@anything.example.org"))
    await listed.check(ACCOUNT, box("School <hello@school.example>"))
    with pytest.raises(SenderNotAllowed):
        await listed.check(ACCOUNT, box("hello@other.example"))  # another account's domain
    # As before sender domains: the policy holds `from` only.
    await listed.check(ACCOUNT, box("hello@school.example"), box("desk@elsewhere.example"))


async def test_an_account_with_domains_may_use_those_only_and_no_policy() -> None:
    domains = Domains()
    await domains.given(ACCOUNT, "school.example", "news.school.example")
    rules = rules_on(domains, SenderPolicy(frozenset({"service.example"})))

    await rules.check(ACCOUNT, box("hello@school.example"))
    await rules.check(ACCOUNT, box("Hi <hi@NEWS.school.example>"), box("desk@school.example"))
    for sender in ["hello@service.example", "hello@mail.school.example", "x@example.com"]:
        with pytest.raises(SenderNotAllowed) as caught:
            await rules.check(ACCOUNT, box(sender))
        assert "`from`" in caught.value.message
        assert repr(box(sender).domain) in caught.value.message


async def test_a_reply_to_outside_the_accounts_domains_is_refused_naming_it() -> None:
    domains = Domains()
    await domains.given(ACCOUNT, "school.example")
    rules = rules_on(domains)

    with pytest.raises(SenderNotAllowed) as caught:
        await rules.check(ACCOUNT, box("hello@school.example"), box("Desk <d@help.example>"))

    assert "`reply_to`" in caught.value.message
    assert "'help.example'" in caught.value.message


async def test_each_account_is_held_to_its_own_domains() -> None:
    domains = Domains()
    await domains.given(ACCOUNT, "school.example")
    await domains.given(OTHER, "other.example")
    rules = rules_on(domains)

    await rules.check(OTHER, box("a@other.example"))
    with pytest.raises(SenderNotAllowed):
        await rules.check(OTHER, box("a@school.example"))


# --- the cache --------------------------------------------------------------------------


async def test_a_cached_check_reads_nothing_until_the_domains_are_max_age_old() -> None:
    domains = Domains()
    await domains.given(ACCOUNT, "school.example")
    rules = rules_on(domains)
    await rules.check(ACCOUNT, box("a@school.example"))
    assert domains.reads == 1

    await domains.given(ACCOUNT, "office.example")  # by the CLI, say: no notice comes
    domains.clock.now += MAX_AGE_S - 0.001
    for _ in range(100):
        with pytest.raises(SenderNotAllowed):  # not yet seen
            await rules.check(ACCOUNT, box("a@office.example"))
    assert domains.reads == 1

    domains.clock.now += 0.001
    await rules.check(ACCOUNT, box("a@office.example"))
    assert domains.reads == 2


async def test_the_first_domain_of_an_account_is_obeyed_once_max_age_has_passed() -> None:
    domains = Domains()
    rules = rules_on(domains)
    await rules.check(ACCOUNT, box("a@anything.example"))  # none: any

    await domains.given(ACCOUNT, "school.example")
    domains.clock.now += MAX_AGE_S

    with pytest.raises(SenderNotAllowed):
        await rules.check(ACCOUNT, box("a@anything.example"))


async def test_the_age_counts_from_when_the_read_began() -> None:
    # A slow read: a change made while it ran must still be seen MAX_AGE_S after it began.
    domains = Domains(takes=2.0)
    await domains.given(ACCOUNT, "school.example")
    rules = rules_on(domains)
    await rules.check(ACCOUNT, box("a@school.example"))  # began at 100, answered at 102
    await domains.remove(ACCOUNT, "school.example")

    domains.clock.now = 100.0 + MAX_AGE_S
    await rules.check(ACCOUNT, box("a@anything.example"))

    assert domains.reads == 2


async def test_checks_waiting_for_one_account_share_one_read() -> None:
    domains = Domains(gate=asyncio.Event())
    await domains.given(ACCOUNT, "school.example")
    rules = rules_on(domains)

    checks = [
        asyncio.create_task(rules.check(ACCOUNT, box(f"a{i}@school.example"))) for i in range(20)
    ]
    refused = asyncio.create_task(rules.check(ACCOUNT, box("a@elsewhere.example")))
    await asyncio.sleep(0)
    domains.gate.set()  # type: ignore[union-attr]
    await asyncio.gather(*checks)

    with pytest.raises(SenderNotAllowed):
        await refused
    assert domains.reads == 1


async def test_a_waiter_cancelled_leaves_the_others_read_running() -> None:
    domains = Domains(gate=asyncio.Event())
    await domains.given(ACCOUNT, "school.example")
    rules = rules_on(domains)
    gone = asyncio.create_task(rules.check(ACCOUNT, box("a@school.example")))
    staying = asyncio.create_task(rules.check(ACCOUNT, box("b@school.example")))
    await asyncio.sleep(0)

    gone.cancel()
    await asyncio.sleep(0)
    domains.gate.set()  # type: ignore[union-attr]

    await staying
    assert gone.cancelled()
    assert domains.reads == 1


async def test_a_failed_read_fails_its_checks_and_is_not_kept() -> None:
    domains = Domains(failing=True)
    rules = rules_on(domains)

    with pytest.raises(StorageUnavailable):
        await rules.check(ACCOUNT, box("a@school.example"))
    domains.failing = False
    await rules.check(ACCOUNT, box("a@school.example"))

    assert domains.reads == 2


async def test_forget_makes_the_next_check_read_and_a_read_begun_before_is_not_kept() -> None:
    domains = Domains()
    rules = rules_on(domains)
    await rules.check(ACCOUNT, box("a@anything.example"))
    await domains.given(ACCOUNT, "school.example")

    rules.forget(ACCOUNT)
    with pytest.raises(SenderNotAllowed):
        await rules.check(ACCOUNT, box("a@anything.example"))
    assert domains.reads == 2

    # A read that began before a forget answers its own check, and is not kept.
    domains.gate = asyncio.Event()
    rules.forget(ACCOUNT)
    early = asyncio.create_task(rules.check(ACCOUNT, box("a@school.example")))
    while domains.reads < 3:  # the read has begun
        await asyncio.sleep(0)
    rules.forget(ACCOUNT)
    domains.gate.set()
    await early
    await rules.check(ACCOUNT, box("a@school.example"))
    assert domains.reads == 4


async def test_a_check_after_forget_does_not_join_a_read_begun_before() -> None:
    # A change in this process (the service forgets) while a read is under way: the next
    # check must not take that read's older answer.
    gate = asyncio.Event()
    domains = Domains(gate=gate)
    rules = rules_on(domains)
    early = asyncio.create_task(rules.check(ACCOUNT, box("a@anything.example")))
    while domains.reads < 1:
        await asyncio.sleep(0)

    await domains.given(ACCOUNT, "school.example")
    rules.forget(ACCOUNT)
    late = asyncio.create_task(rules.check(ACCOUNT, box("a@anything.example")))
    gate.set()

    await early  # began before the change: any sender
    with pytest.raises(SenderNotAllowed):
        await late
    assert domains.reads == 2


# --- managing them ----------------------------------------------------------------------


async def test_a_change_through_the_service_is_obeyed_here_at_once() -> None:
    domains = Domains()
    rules = rules_on(domains)
    service = SenderDomainService(domains, rules, clock=FakeClock())
    await rules.check(ACCOUNT, box("a@anything.example"))

    added, is_new = await service.add(ACCOUNT, "  School.Example ")

    assert (added, is_new) == (SenderDomain(ACCOUNT, "school.example", START), True)
    with pytest.raises(SenderNotAllowed):
        await rules.check(ACCOUNT, box("a@anything.example"))
    assert await service.add(ACCOUNT, "school.example") == (added, False)
    assert await service.remove(ACCOUNT, "SCHOOL.example") == ("school.example", True)
    assert await service.remove(ACCOUNT, "school.example") == ("school.example", False)
    await rules.check(ACCOUNT, box("a@anything.example"))  # none left: any again


@pytest.mark.parametrize("raw", ["", "hello@school.example", "not a domain", "localhost"])
async def test_the_service_refuses_what_is_not_a_host_name_naming_domain(raw: str) -> None:
    domains = Domains()
    service = SenderDomainService(domains, rules_on(domains))

    for change in (service.add, service.remove):
        with pytest.raises(ValidationFailed) as caught:
            await change(ACCOUNT, raw)
        assert [e.field for e in caught.value.errors] == ["domain"]
    assert await service.list(ACCOUNT) == []
