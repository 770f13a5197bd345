from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.idempotency import Claim


class IdempotencyStore(Protocol):
    """Claims on idempotency keys, per account. Raises StorageUnavailable."""

    async def claim(self, claim: Claim) -> Claim:
        """Store ``claim`` unless the account already holds an unexpired claim on the key.
        Returns the claim now stored: ``claim`` itself (same token) if it won, else the
        existing one. An expired claim (older than 24 h) is replaced."""
        ...

    async def reclaim(self, existing: Claim, token: str, now: datetime) -> Claim | None:
        """Set ``existing`` back to running under a new token, only if it has not changed
        since it was read (its token is still the same). None if another got there first."""
        ...

    async def attach(self, claim: Claim, message_ids: Sequence[str], now: datetime) -> None:
        """Record which messages the claimed request made."""
        ...

    async def finish(self, claim: Claim, now: datetime) -> None:
        """Mark the claimed request finished."""
        ...
