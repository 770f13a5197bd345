"""How passwords are hashed and checked (an adapter's choice of algorithm: Argon2id)."""

from __future__ import annotations

from typing import Protocol


class PasswordHasher(Protocol):
    """Both calls are CPU work of tens of milliseconds; an adapter runs them off the event
    loop."""

    async def hash(self, password: str) -> str: ...

    async def verify(self, password_hash: str, password: str) -> bool:
        """Whether the password is the one hashed (False for a hash it cannot read)."""
        ...

    def needs_rehash(self, password_hash: str) -> bool:
        """The hash was made with other parameters than today's."""
        ...

    async def burn(self, password: str) -> None:
        """Spend the time a verify would, on no hash: a sign-in for an address that has no
        user takes as long as one for an address that has."""
        ...
