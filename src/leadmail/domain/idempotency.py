"""Idempotency keys: the same request sent twice acts once.

Scoped per account and kept 24 hours. The same key with the same body replays the first
result; with another body it is a conflict; while the first is still running, too.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from leadmail.domain.errors import DomainError, ValidationFailed

MAX_KEY_LENGTH = 256
KEEP_FOR = timedelta(hours=24)
# A request still "running" after this long died with its process; another may take over.
STALE_AFTER = timedelta(seconds=120)


class IdempotencyConflict(DomainError):
    code = "IDEMPOTENCY_CONFLICT"


class IdempotencyKeyReused(IdempotencyConflict):
    code = "IDEMPOTENCY_KEY_REUSED"

    def __init__(self) -> None:
        super().__init__("This Idempotency-Key was already used with a different request body")


class IdempotencyInProgress(IdempotencyConflict):
    code = "IDEMPOTENCY_IN_PROGRESS"

    def __init__(self) -> None:
        super().__init__(
            "A request with this Idempotency-Key is still being processed; retry shortly"
        )


def check_key(key: str) -> str:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        raise ValidationFailed.one(
            "Idempotency-Key", f"must be 1-{MAX_KEY_LENGTH} printable ASCII characters"
        )
    return key


def fingerprint(operation: str, request: Any) -> str:
    """A digest of what was asked, so a reused key with another body is recognised."""
    canonical = json.dumps([operation, request], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class ClaimState(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class Claim:
    """The record of one idempotent request: which messages it made."""

    account_id: str
    key: str
    fingerprint: str
    token: str  # who holds it: changes on every (re)claim, for compare-and-set
    state: ClaimState
    message_ids: tuple[str, ...]
    created_at: datetime
    updated_at: datetime

    def expired(self, now: datetime) -> bool:
        return now - self.created_at >= KEEP_FOR

    def stale(self, now: datetime) -> bool:
        return self.state is ClaimState.RUNNING and now - self.updated_at >= STALE_AFTER


def new_claim_token() -> str:
    return secrets.token_hex(16)
