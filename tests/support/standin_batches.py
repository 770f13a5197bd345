"""The providers' batch endpoints as the stand-in (standin.py) answers them.

Resend ``POST /emails/batch``: a JSON array of at most 100 messages; 200
``{"data": [{"id": ...}, ...]}`` in the messages' order. Without
``x-batch-validation: permissive`` one invalid message fails the whole batch (422). Its
``Idempotency-Key`` works as for a single message: the same key with the same body gets
the first answer again and delivers nothing; with another body, 409
``invalid_idempotent_request`` (https://resend.com/docs/api-reference/errors).

Postmark ``POST /email/batch``: a JSON array of at most 500 messages; 200 with one
SendEmailResponse per message even when some are refused: ``ErrorCode`` 0 and a
``MessageID``, or the refusal's ``ErrorCode`` and ``Message`` (406 for an inactive
recipient) without an id.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # standin.py imports this module
    from tests.support.standin import Provider, RecordedRequest

BATCH_PATHS: dict[str, Provider] = {"/emails/batch": "resend", "/email/batch": "postmark"}
MAX_BATCH: dict[Provider, int] = {"resend": 100, "postmark": 500}
INACTIVE = 406  # Postmark's ErrorCode for a recipient marked inactive
_REQUIRED: dict[Provider, tuple[str, ...]] = {
    "resend": ("from", "to", "subject"),
    "postmark": ("From", "To"),
}


def is_batch(path: str) -> bool:
    return path in BATCH_PATHS


def malformed(provider: Provider, body: Any) -> str:
    """What the provider would object to in a batch's shape, or ""."""
    if not isinstance(body, list) or not body:
        return "the body must be a non-empty JSON array of emails"
    if len(body) > MAX_BATCH[provider]:
        return f"a batch holds at most {MAX_BATCH[provider]} emails, got {len(body)}"
    for i, message in enumerate(body):
        if not isinstance(message, dict):
            return f"[{i}] must be an email object"
        missing = [name for name in _REQUIRED[provider] if name not in message]
        if missing:
            return f"[{i}] missing required field: {missing[0]}"
    return ""


def recipients(provider: Provider, message: dict[str, Any]) -> list[str]:
    raw = message["to"] if provider == "resend" else message["To"]
    texts = [raw] if isinstance(raw, str) else list(raw)
    return [address.lower() for _, address in getaddresses(texts)]


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """What the stand-in answers a batch: a JSON body with the ids it issued, or a failure
    in the provider's error shape (``refusal``: status and text)."""

    status: int = 200
    data: Any = None
    provider_ids: tuple[str, ...] = ()
    refusal: tuple[int, str] | None = None
    replayed: bool = False  # the first answer to this idempotency key, again


class BatchEndpoints:
    """What the stand-in remembers for its batch endpoints: recipients to refuse, and
    Resend's idempotency keys with the first answer to each. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refused: dict[str, str] = {}  # address -> the refusal's text
        self._keys: dict[str, tuple[bytes, BatchAnswer]] = {}

    def refuse(self, address: str, message: str) -> None:
        with self._lock:
            self._refused[address.lower()] = message

    def reset(self) -> None:
        with self._lock:
            self._refused.clear()
            self._keys.clear()

    def answer(self, provider: Provider, request: RecordedRequest) -> BatchAnswer:
        """The answer to a well-formed batch with valid credentials."""
        messages: list[dict[str, Any]] = request.json()
        key = request.header("idempotency-key") if provider == "resend" else None
        with self._lock:
            if key is not None and key in self._keys:
                body, first = self._keys[key]
                if body != request.body:
                    text = "Same idempotency key used with a different request payload."
                    return BatchAnswer(refusal=(409, text))
                return replace(first, replayed=True)
            refusals = [self._refusal(provider, message) for message in messages]
        if provider == "resend":
            problem = next((text for text in refusals if text), "")
            if problem:  # strict validation: one bad email fails the batch
                return BatchAnswer(refusal=(422, problem))
            ids = tuple(str(uuid.uuid4()) for _ in messages)
            answer = BatchAnswer(data={"data": [{"id": i} for i in ids]}, provider_ids=ids)
        else:
            answer = _postmark_answer(messages, refusals)
        if key is not None:  # Resend keeps an accepted batch's answer (24 h)
            with self._lock:
                self._keys.setdefault(key, (request.body, answer))
        return answer

    def _refusal(self, provider: Provider, message: dict[str, Any]) -> str:
        found = [self._refused[a] for a in recipients(provider, message) if a in self._refused]
        return found[0] if found else ""


def _postmark_answer(messages: list[dict[str, Any]], refusals: list[str]) -> BatchAnswer:
    entries: list[dict[str, Any]] = []
    ids: list[str] = []
    for message, refusal in zip(messages, refusals, strict=True):
        if refusal:
            entries.append({"ErrorCode": INACTIVE, "Message": refusal})
            continue
        ids.append(str(uuid.uuid4()))
        entries.append(
            {
                "To": message["To"],
                "SubmittedAt": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "MessageID": ids[-1],
                "ErrorCode": 0,
                "Message": "OK",
            }
        )
    return BatchAnswer(data=entries, provider_ids=tuple(ids))
