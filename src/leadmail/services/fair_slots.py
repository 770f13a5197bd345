"""The provider's slots (LEADMAIL_EMAIL_CONCURRENCY requests at once, per process) shared
fairly between accounts:

- when slots free up, they go to the accounts waiting in turn (round robin), each
  account's own requests in the order they came;
- the last free slot goes only to an account that holds none: a busy account uses at most
  all slots but one, so another account's send finds one at once instead of waiting
  behind the busy one's queue (with 1 slot, there is no such reserve).

So one account's 20 large template sends cannot hold another account's single send behind
their thousand messages.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque


class FairSlots:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("at least one slot")
        self._capacity = capacity
        self._free = capacity
        self._held: dict[str, int] = {}
        # The accounts waiting, in the order of their turns, each with its waiters.
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def free(self) -> int:
        return self._free

    def _may_take(self, account: str) -> bool:
        return self._free > 1 or (
            self._free == 1 and (self._capacity == 1 or not self._held.get(account))
        )

    def _take(self, account: str) -> None:
        self._free -= 1
        self._held[account] = self._held.get(account, 0) + 1

    def try_acquire(self, account: str) -> bool:
        """A slot at once, if ``account`` may take one and nobody waits (no waiting, no
        timer)."""
        if not self._waiting and self._may_take(account):
            self._take(account)
            return True
        return False

    async def acquire(self, account: str) -> None:
        """A slot, once ``account`` may take one in its turn. Cancelled (a deadline passed
        while waiting): nothing is held."""
        if self.try_acquire(account):
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(account, deque()).append(waiter)
        self._hand_over()  # the reserve may be free, and this account may take it
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(account)  # handed a slot as it was cancelled: pass it on
            else:
                self._forget(account, waiter)
            raise

    def release(self, account: str) -> None:
        """``account`` gives a slot back: to the accounts waiting, in turn."""
        self._free += 1
        held = self._held.get(account, 0) - 1
        if held > 0:
            self._held[account] = held
        else:
            self._held.pop(account, None)
        self._hand_over()

    def _hand_over(self) -> None:
        while self._free > 0 and self._waiting:
            for account in self._waiting:  # in turn
                if self._may_take(account):
                    break
            else:
                return  # only the reserve is free, and every waiter holds a slot
            queue = self._waiting[account]
            waiter = queue.popleft()
            if queue:
                self._waiting.move_to_end(account)  # its next request waits for its turn
            else:
                del self._waiting[account]
            if not waiter.done():
                self._take(account)
                waiter.set_result(None)

    def _forget(self, account: str, waiter: asyncio.Future[None]) -> None:
        queue = self._waiting.get(account)
        if queue is None:
            return
        try:
            queue.remove(waiter)
        except ValueError:
            return
        if not queue:
            del self._waiting[account]
