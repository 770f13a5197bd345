"""Resend's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    ItemAnswer,
    JsonObject,
    ProviderRequest,
    clip,
    json_object,
    padded,
    plain_text,
)
from leadmail.domain.delivery import BatchItem
from leadmail.domain.email import OutgoingEmail


class Resend(Dialect):
    name = "resend"
    default_base_url = "https://api.resend.com"
    # Resend keeps the first answer for a key for 24 h: a retried attempt of the same
    # message (say, after a timeout) is not delivered twice.
    idempotency_header = "Idempotency-Key"
    # POST /emails/batch takes up to 100 messages; a team may make 2 requests a second by
    # default (429 with retry-after beyond that). The batch's key works as a message's.
    max_batch = 100
    default_rate = 2.0

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            path="/emails",
            headers={self.idempotency_header: message_id},
            json=_message(email),
        )

    def build_batch(self, items: Sequence[BatchItem], batch_key: str) -> ProviderRequest:
        # Without "x-batch-validation: permissive", one invalid message fails the whole
        # batch (422) and the answer's ids are the messages' in order.
        return ProviderRequest(
            method="POST",
            path="/emails/batch",
            headers={self.idempotency_header: batch_key},
            json_array=[_message(item.email) for item in items],
        )

    def batch_answers(
        self, status: int, headers: Mapping[str, str], body: bytes, count: int
    ) -> list[ItemAnswer]:
        # {"data": [{"id": "..."}, ...]}
        data = json_object(body).get("data")
        entries = data if isinstance(data, list) else []
        return padded([ItemAnswer(_id_of(entry)) for entry in entries], count)

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"statusCode": 422, "name": "validation_error", "message": "..."}
        data = json_object(body)
        message, name = data.get("message"), data.get("name")
        if isinstance(message, str) and message:
            return clip(f"{name}: {message}" if isinstance(name, str) and name else message)
        return plain_text(body)

    def retryable(self, status: int, body: bytes) -> bool:
        # 409 concurrent_idempotent_requests: an earlier attempt with this key (one we gave
        # up waiting for) is still in progress at Resend. It may yet be delivered, so this
        # is "not now", never "refused".
        if status == 409 and json_object(body).get("name") == "concurrent_idempotent_requests":
            return True
        return super().retryable(status, body)


def _message(email: OutgoingEmail) -> JsonObject:
    message: JsonObject = {
        "from": email.sender.formatted(),
        "to": [box.formatted() for box in email.to],
        "subject": email.subject,
        "html": email.html,
    }
    if email.text is not None:
        message["text"] = email.text
    if email.reply_to is not None:  # a string or an array of strings
        message["reply_to"] = email.reply_to.formatted()
    if email.headers:  # an object of name -> value
        message["headers"] = dict(email.headers)
    return message


def _id_of(entry: object) -> str | None:
    value = entry.get("id") if isinstance(entry, dict) else None
    return value if isinstance(value, str) and value else None
