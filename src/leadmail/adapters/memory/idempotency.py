from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.domain.idempotency import Claim, ClaimState
from leadmail.ports.idempotency import IdempotencyStore


class MemoryIdempotencyStore(IdempotencyStore):
    def __init__(self) -> None:
        self._claims: dict[tuple[str, str], Claim] = {}

    async def claim(self, claim: Claim) -> Claim:
        where = (claim.account_id, claim.key)
        held = self._claims.get(where)
        if held is None or held.expired(claim.created_at):
            self._claims[where] = held = claim
        return held

    async def reclaim(self, existing: Claim, token: str, now: datetime) -> Claim | None:
        where = (existing.account_id, existing.key)
        held = self._claims.get(where)
        if held is None or held.token != existing.token:
            return None
        taken = replace(held, token=token, state=ClaimState.RUNNING, updated_at=now)
        self._claims[where] = taken
        return taken

    async def attach(self, claim: Claim, message_ids: Sequence[str], now: datetime) -> None:
        self._change(claim, message_ids=tuple(message_ids), updated_at=now)

    async def finish(self, claim: Claim, now: datetime) -> None:
        self._change(claim, state=ClaimState.FINISHED, updated_at=now)

    def _change(
        self,
        claim: Claim,
        *,
        updated_at: datetime,
        state: ClaimState | None = None,
        message_ids: tuple[str, ...] | None = None,
    ) -> None:
        # Only the holder may write: once another has reclaimed the key, this is a no-op.
        where = (claim.account_id, claim.key)
        held = self._claims.get(where)
        if held is None or held.token != claim.token:
            return
        self._claims[where] = replace(
            held,
            state=held.state if state is None else state,
            message_ids=held.message_ids if message_ids is None else message_ids,
            updated_at=updated_at,
        )
