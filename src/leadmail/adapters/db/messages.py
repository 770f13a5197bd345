from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from leadmail.adapters.db.engine import (
    Database,
    aware,
    refused,
    translate_errors,
)
from leadmail.domain.email import MessageRecord, MessageStatus
from leadmail.domain.idempotency import KEEP_FOR, Claim, ClaimState
from leadmail.ports.messages import EmailLog, IdempotencyStore

_DUPLICATE = "The email log already holds a message with this id"

# Plain SQL for the two writes every send makes, on Postgres (see leads.py). _message_row
# gives the values in _INSERT's column order.
_INSERT = (
    "INSERT INTO email_messages (message_id, account_id, sender, recipients, subject,"
    " template_id, status, provider, provider_message_id, attempts, last_error, created_at,"
    " updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
)
_UPDATE = (
    "UPDATE email_messages SET status = $3, attempts = $4, provider_message_id = $5,"
    " last_error = $6, updated_at = $7 WHERE account_id = $1 AND message_id = $2"
)


class PiccoloEmailLog(EmailLog):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.email_messages

    async def add(self, records: Sequence[MessageRecord]) -> None:
        if not records:
            return
        t = self._t
        pool = self._db.pool
        with (
            refused(duplicate=_DUPLICATE),
            translate_errors(),
        ):
            if pool is not None:  # Postgres: one pipelined statement, no query building
                async with pool.acquire() as connection, connection.transaction():
                    await connection.executemany(
                        _INSERT, [tuple(_message_row(r).values()) for r in records]
                    )
                return
            async with self._db.transaction():
                await t.insert(*(t(**_message_row(record)) for record in records))

    async def update(self, records: Sequence[MessageRecord]) -> None:
        if not records:
            return
        t = self._t
        pool = self._db.pool
        with refused(), translate_errors():
            if pool is not None:
                async with pool.acquire() as connection, connection.transaction():
                    await connection.executemany(
                        _UPDATE,
                        [
                            (
                                r.account_id,
                                r.message_id,
                                r.status.value,
                                r.attempts,
                                r.provider_message_id,
                                r.last_error,
                                r.updated_at,
                            )
                            for r in records
                        ],
                    )
                return
            async with self._db.transaction():
                # One statement per record, in turn: one connection, one query at a time.
                for record in records:
                    await t.update(
                        {
                            t.status: record.status.value,
                            t.attempts: record.attempts,
                            t.provider_message_id: record.provider_message_id,
                            t.last_error: record.last_error,
                            t.updated_at: record.updated_at,
                        }
                    ).where(
                        (t.account_id == record.account_id) & (t.message_id == record.message_id)
                    )

    async def get(self, account_id: str, message_id: str) -> MessageRecord | None:
        t = self._t
        with refused(), translate_errors():
            row = (
                await t.select()
                .where((t.account_id == account_id) & (t.message_id == message_id))
                .first()
            )
        return None if row is None else _message(row)

    async def get_many(self, account_id: str, message_ids: Sequence[str]) -> list[MessageRecord]:
        if not message_ids:
            return []
        t = self._t
        with refused(), translate_errors():
            rows = await t.select().where(
                (t.account_id == account_id) & t.message_id.is_in(sorted(set(message_ids)))
            )
        found = {row["message_id"]: _message(row) for row in rows}
        return [found[message_id] for message_id in message_ids if message_id in found]


class PiccoloIdempotencyStore(IdempotencyStore):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.idempotency_keys

    async def claim(self, claim: Claim) -> Claim:
        t = self._t
        row = t(claim_id=_new_claim_id(), **_claim_row(claim))
        with refused(), translate_errors():
            async with self._db.transaction():
                # Insert, or take over an expired claim; a live one stays. The unique index on
                # (account_id, key) makes a concurrent claim wait for this one and then see
                # it live, so exactly one of them wins.
                await t.insert(row).on_conflict(
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
        return _claim(stored)

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
        return _claim(rows[0]) if rows else None

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


def _new_claim_id() -> str:
    return "clm_" + secrets.token_hex(16)


def _message_row(record: MessageRecord) -> dict[str, Any]:
    return {
        "message_id": record.message_id,
        "account_id": record.account_id,
        "sender": record.sender,
        "recipients": json.dumps(list(record.to)),
        "subject": record.subject,
        "template_id": record.template_id,
        "status": record.status.value,
        "provider": record.provider,
        "provider_message_id": record.provider_message_id,
        "attempts": record.attempts,
        "last_error": record.last_error,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }


def _message(row: dict[str, Any]) -> MessageRecord:
    return MessageRecord(
        message_id=row["message_id"],
        account_id=row["account_id"],
        sender=row["sender"],
        to=tuple(json.loads(row["recipients"])),
        subject=row["subject"],
        template_id=row["template_id"],
        status=MessageStatus(row["status"]),
        provider=row["provider"],
        provider_message_id=row["provider_message_id"],
        attempts=row["attempts"],
        last_error=row["last_error"],
        created_at=aware(row["created_at"]),
        updated_at=aware(row["updated_at"]),
    )


def _claim_row(claim: Claim) -> dict[str, Any]:
    return {
        "account_id": claim.account_id,
        "key": claim.key,
        "fingerprint": claim.fingerprint,
        "token": claim.token,
        "state": claim.state.value,
        "message_ids": json.dumps(list(claim.message_ids)),
        "created_at": claim.created_at,
        "updated_at": claim.updated_at,
    }


def _claim(row: dict[str, Any]) -> Claim:
    return Claim(
        account_id=row["account_id"],
        key=row["key"],
        fingerprint=row["fingerprint"],
        token=row["token"],
        state=ClaimState(row["state"]),
        message_ids=tuple(json.loads(row["message_ids"])),
        created_at=aware(row["created_at"]),
        updated_at=aware(row["updated_at"]),
    )
