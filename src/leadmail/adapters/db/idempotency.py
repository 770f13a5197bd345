from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import IdempotencyKeys
from leadmail.domain.idempotency import KEEP_FOR, Claim, ClaimState
from leadmail.ports.idempotency import IdempotencyStore


def _new_claim_id(_: Claim) -> str:
    return "clm_" + secrets.token_hex(16)


# A surrogate key, because Piccolo needs one primary-key column; what identifies a claim
# is (account_id, key), unique through an index.
CLAIMS = Mapped(IdempotencyKeys, Claim, computed={"claim_id": _new_claim_id})


class PiccoloIdempotencyStore(IdempotencyStore):
    # Claims are rare and conditional (upserts, compare-and-set): Piccolo's query builder.
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.idempotency_keys

    async def claim(self, claim: Claim) -> Claim:
        t = self._t
        with refused(), translate_errors():
            async with self._db.transaction():
                # Insert, or take over an expired claim; a live one stays. The unique index on
                # (account_id, key) makes a concurrent claim wait for this one and then see
                # it live, so exactly one of them wins.
                await t.insert(t(**CLAIMS.to_dict(claim))).on_conflict(
                    target=(t.account_id, t.key),
                    action="DO UPDATE",
                    values=[
                        t.fingerprint,
                        t.token,
                        t.state,
                        t.message_ids,
                        t.created_at,
                        t.updated_at,
                    ],
                    where=t.created_at <= claim.created_at - KEEP_FOR,
                )
                stored = await t.select().where(self._of(claim)).first()
        return CLAIMS.from_row(stored)

    async def reclaim(self, existing: Claim, token: str, now: datetime) -> Claim | None:
        t = self._t
        async with self._db.writing():
            with refused(), translate_errors():
                rows = (
                    await t.update(
                        {t.state: ClaimState.RUNNING.value, t.token: token, t.updated_at: now}
                    )
                    .where(self._of(existing) & (t.token == existing.token))
                    .returning(*t.all_columns())
                )
        return CLAIMS.from_row(rows[0]) if rows else None

    async def attach(self, claim: Claim, message_ids: Sequence[str], now: datetime) -> None:
        t = self._t
        await self._change(claim, {t.message_ids: json.dumps(list(message_ids)), t.updated_at: now})

    async def finish(self, claim: Claim, now: datetime) -> None:
        t = self._t
        await self._change(claim, {t.state: ClaimState.FINISHED.value, t.updated_at: now})

    async def _change(self, claim: Claim, values: dict[Any, Any]) -> None:
        # Only the holder writes: once another has reclaimed the key, its token differs.
        t = self._t
        async with self._db.writing():
            with refused(), translate_errors():
                await t.update(values).where(self._of(claim) & (t.token == claim.token))

    def _of(self, claim: Claim) -> Any:
        t = self._t
        return (t.account_id == claim.account_id) & (t.key == claim.key)
