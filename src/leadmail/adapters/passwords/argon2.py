"""Argon2id by argon2-cffi, run in a worker thread (each hash holds a core for tens of ms;
the event loop serves other requests meanwhile)."""

from __future__ import annotations

import anyio.to_thread
from argon2 import PasswordHasher as Argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from leadmail.ports.passwords import PasswordHasher


class Argon2PasswordHasher(PasswordHasher):
    """argon2-cffi's defaults (RFC 9106's low-memory choice: t=3, m=64 MiB, p=4) unless
    told otherwise; tests pass cheaper ones."""

    def __init__(self, *, time_cost: int | None = None, memory_kib: int | None = None) -> None:
        default = Argon2()  # type Argon2id
        self._argon2 = Argon2(
            time_cost=default.time_cost if time_cost is None else time_cost,
            memory_cost=default.memory_cost if memory_kib is None else memory_kib,
        )
        self._decoy = self._argon2.hash("a password no user has")

    async def hash(self, password: str) -> str:
        return await anyio.to_thread.run_sync(self._argon2.hash, password)

    async def verify(self, password_hash: str, password: str) -> bool:
        return await anyio.to_thread.run_sync(self._check, password_hash, password)

    def _check(self, password_hash: str, password: str) -> bool:
        try:
            return self._argon2.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, password_hash: str) -> bool:
        try:
            return self._argon2.check_needs_rehash(password_hash)
        except InvalidHashError:
            return True

    async def burn(self, password: str) -> None:
        await self.verify(self._decoy, password)
