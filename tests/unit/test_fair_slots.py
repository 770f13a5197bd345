"""The provider's slots shared fairly between accounts: freed slots go to the accounts
waiting in turn, each account's requests in order; the last free slot is kept for an
account that holds none; a cancelled waiter holds nothing."""

from __future__ import annotations

import asyncio

import pytest

from leadmail.services.fair_slots import FairSlots


async def test_a_busy_account_leaves_one_slot_for_another() -> None:
    slots = FairSlots(3)
    assert slots.try_acquire("a")
    assert slots.try_acquire("a")
    assert not slots.try_acquire("a")  # the last one: kept for an account holding none
    assert slots.try_acquire("b")
    assert slots.free == 0
    for account in ("a", "a", "b"):
        slots.release(account)
    assert slots.free == 3


async def test_one_slot_is_no_reserve() -> None:
    slots = FairSlots(1)
    assert slots.try_acquire("a")
    slots.release("a")
    assert slots.try_acquire("a")


async def test_waiting_accounts_take_turns() -> None:
    slots = FairSlots(2)
    await slots.acquire("a")
    await slots.acquire("c")  # both held: nothing free
    served: list[str] = []

    async def wait(account: str, n: int) -> None:
        await slots.acquire(account)
        served.append(f"{account}{n}")

    # Account a queues four requests before b's one: b is served second, not fifth.
    tasks = [asyncio.create_task(wait("a", n)) for n in range(4)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(wait("b", 0)))
    await asyncio.sleep(0)
    slots.release("c")  # a holds one, b none: of the two waiting, a's turn first...
    await asyncio.sleep(0)
    # ...but a may not take the last slot while holding one: b takes it.
    assert served == ["b0"]
    slots.release("b")  # free again, but a holds one: the reserve is kept
    await asyncio.sleep(0)
    assert served == ["b0"]
    for _ in range(4):  # each of a's, given back, goes to a's next
        slots.release("a")
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    assert served == ["b0", "a0", "a1", "a2", "a3"]


async def test_a_waiter_cancelled_by_its_deadline_holds_nothing() -> None:
    slots = FairSlots(1)
    await slots.acquire("a")

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await slots.acquire("b")

    slots.release("a")
    assert slots.free == 1  # nobody waits any more: the slot is free
    assert slots.try_acquire("b")
