from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from leadmail.domain.email import MessageRecord
from leadmail.domain.idempotency import Claim, ClaimState
from leadmail.ports.errors import PortError
from leadmail.ports.messages import EmailLog, IdempotencyStore


class MemoryEmailLog(EmailLog):
    def __init__(self) -> None:
        self._records: dict[str, MessageRecord] = {}

    async def add(self, records: Sequence[MessageRecord]) -> None:
        ids = [record.message_id for record in records]
        if len(set(ids)) != len(ids) or any(i in self._records for i in ids):
            # As the SQL stores: a message id is the primary key, and the batch is atomic.
            raise PortError("The email log already holds a message with this id")
        for record in records:
            self._records[record.message_id] = record

    async def update(self, records: Sequence[MessageRecord]) -> None:
        for record in records:
            stored = self._records.get(record.message_id)
            if stored is None or stored.account_id != record.account_id:
                continue
            self._records[record.message_id] = replace(
                stored,
                status=record.status,
                attempts=record.attempts,
                provider_message_id=record.provider_message_id,
                last_error=record.last_error,
                updated_at=record.updated_at,
            )

    async def get(self, account_id: str, message_id: str) -> MessageRecord | None:
        record = self._records.get(message_id)
        return record if record is not None and record.account_id == account_id else None

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[MessageRecord]:
        found = (self._records.get(message_id) for message_id in message_ids)
        return [r for r in found if r is not None and r.account_id == account_id]


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
