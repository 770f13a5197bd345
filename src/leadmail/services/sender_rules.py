"""Which ``from`` and ``reply_to`` an account may use: the one sender rule of every send path
and of campaign creation.

An account with sender domains (domain/sender_domains.py) may use addresses in those
domains only, ``reply_to`` included; an account with none keeps the service-wide
SenderPolicy (LEADMAIL_ALLOWED_SENDER_DOMAINS; empty: any), which holds ``from`` only.

Each process keeps an account's domains for at most MAX_AGE_S, timed from when their read
began, so a change made anywhere (the CLI, another server) is obeyed by every server and
worker within that, with no notice to send and on SQLite as on Postgres; a cached check is
a dict lookup and a clock read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from leadmail.domain.email import Mailbox, SenderNotAllowed, SenderPolicy
from leadmail.ports.sender_domains import SenderDomainRepository

# At most this old when used: a change is seen within it (plus one read), well inside the
# 10 s the README promises.
MAX_AGE_S = 5.0
MAX_ACCOUNTS = 10_000  # cached at once; past that the cache starts afresh


class SenderRules:
    def __init__(
        self,
        policy: SenderPolicy,
        domains: SenderDomainRepository,
        *,
        max_age: float = MAX_AGE_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._policy = policy
        self._domains = domains
        self._max_age = max_age
        self._monotonic = monotonic
        # account id -> (its domains, when their read began)
        self._cached: dict[str, tuple[frozenset[str], float]] = {}
        self._reading: dict[str, asyncio.Future[frozenset[str]]] = {}
        # Bumped by forget: a read that began before must not cache what it found.
        self._generation = 0

    async def check(
        self, account_id: str, sender: Mailbox, reply_to: Mailbox | None = None
    ) -> None:
        """Returns when the account may send from ``sender`` with replies to ``reply_to``;
        raises SenderNotAllowed naming the field and domain that may not be used, or
        StorageUnavailable when the account's domains must be read and cannot be."""
        hit = self._cached.get(account_id)
        if hit is not None and self._monotonic() - hit[1] < self._max_age:
            domains = hit[0]
        else:
            domains = await self._read(account_id)
        if not domains:
            self._policy.check(sender)
            return
        if sender.domain not in domains:
            raise SenderNotAllowed(_outside("from", sender))
        if reply_to is not None and reply_to.domain not in domains:
            raise SenderNotAllowed(_outside("reply_to", reply_to))

    def forget(self, account_id: str) -> None:
        """Read the account's domains afresh on its next check (this process only; others
        see the change within MAX_AGE_S)."""
        self._generation += 1
        self._cached.pop(account_id, None)
        self._reading.pop(account_id, None)  # a check from now on does not join it

    async def _read(self, account_id: str) -> frozenset[str]:
        """One read per account at a time: checks that need it meanwhile wait for it."""
        reading = self._reading.get(account_id)
        if reading is None:
            reading = asyncio.ensure_future(self._load(account_id))
            self._reading[account_id] = reading
            reading.add_done_callback(lambda done: self._read_done(account_id, done))
        # Shielded: a waiter cancelled (its client gone) does not cancel the others' read.
        return await asyncio.shield(reading)

    def _read_done(self, account_id: str, done: asyncio.Future[frozenset[str]]) -> None:
        if self._reading.get(account_id) is done:
            del self._reading[account_id]
        if not done.cancelled():
            done.exception()  # retrieved, though every waiter may have gone

    async def _load(self, account_id: str) -> frozenset[str]:
        began, generation = self._monotonic(), self._generation
        domains = frozenset(d.domain for d in await self._domains.list(account_id))
        if generation != self._generation:
            return domains
        if len(self._cached) >= MAX_ACCOUNTS:
            self._cached.clear()
        self._cached[account_id] = (domains, began)
        return domains


def _outside(field: str, box: Mailbox) -> str:
    return f"The `{field}` domain {box.domain!r} is not one of this account's sender domains"
