"""FifoGate: at most N holders, the rest served in arrival order, cancellation safe."""

from __future__ import annotations

import asyncio

import pytest

from leadmail.adapters.db.pool import FifoGate


async def enter_now(gate: FifoGate) -> bool:
    """Whether the gate lets a task in without waiting (it is left again at once)."""
    try:
        await asyncio.wait_for(gate.__aenter__(), 0.05)
    except TimeoutError:
        return False
    await gate.__aexit__(None, None, None)
    return True


async def test_admits_up_to_its_size_and_no_more() -> None:
    gate = FifoGate(2)
    await gate.__aenter__()
    await gate.__aenter__()

    assert not await enter_now(gate)
    await gate.__aexit__(None, None, None)
    assert await enter_now(gate)


async def test_waiters_are_served_in_arrival_order_even_against_a_newcomer() -> None:
    gate = FifoGate(1)
    served: list[str] = []

    async def use(name: str) -> None:
        async with gate:
            served.append(name)
            await asyncio.sleep(0)

    await gate.__aenter__()
    waiting = [asyncio.create_task(use(f"w{i}")) for i in range(5)]
    await asyncio.sleep(0.01)
    await gate.__aexit__(None, None, None)
    newcomer = asyncio.create_task(use("newcomer"))  # runs before w0 has resumed
    await asyncio.gather(*waiting, newcomer)

    assert served == ["w0", "w1", "w2", "w3", "w4", "newcomer"]


async def test_a_cancelled_waiter_is_skipped() -> None:
    gate = FifoGate(1)
    served: list[str] = []

    async def use(name: str) -> None:
        async with gate:
            served.append(name)

    await gate.__aenter__()
    first = asyncio.create_task(use("first"))
    second = asyncio.create_task(use("second"))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0)
    await gate.__aexit__(None, None, None)
    await second
    with pytest.raises(asyncio.CancelledError):
        await first

    assert served == ["second"]
    assert await enter_now(gate)


async def test_a_waiter_cancelled_after_being_let_in_passes_its_place_on() -> None:
    gate = FifoGate(1)
    served: list[str] = []

    async def use(name: str) -> None:
        async with gate:
            served.append(name)

    await gate.__aenter__()
    first = asyncio.create_task(use("first"))
    second = asyncio.create_task(use("second"))
    await asyncio.sleep(0.01)
    await gate.__aexit__(None, None, None)  # hands the place to "first"...
    first.cancel()  # ...which is cancelled before it could run
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1)

    assert served == ["second"]
    assert await enter_now(gate)  # and no place was lost
