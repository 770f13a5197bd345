"""Postmark's HTTP API: what it expects and how to read its answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from leadmail.adapters.mail.dialects.base import (
    Dialect,
    ItemAnswer,
    JsonObject,
    ProviderRequest,
    clip,
    json_array,
    json_object,
    padded,
    plain_text,
)
from leadmail.domain.delivery import BatchItem
from leadmail.domain.email import OutgoingEmail

# The status Postmark gives a refusal on its single-message endpoint (ErrorCode in the
# body): a message refused inside a batch is reported as that same refusal.
REFUSED = 422


class Postmark(Dialect):
    name = "postmark"
    default_base_url = "https://api.postmarkapp.com"
    # POST /email/batch takes up to 500 messages (and 50 MB); no published request rate.
    max_batch = 500

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            path="/email",
            headers={"Accept": "application/json"},
            json=_message(email),
        )

    def build_batch(self, items: Sequence[BatchItem], batch_key: str) -> ProviderRequest:
        # Postmark takes no idempotency key: batch_key is not sent.
        return ProviderRequest(
            method="POST",
            path="/email/batch",
            headers={"Accept": "application/json"},
            json_array=[_message(item.email) for item in items],
        )

    def batch_answers(
        self, status: int, headers: Mapping[str, str], body: bytes, count: int
    ) -> list[ItemAnswer]:
        # 200 with one SendEmailResponse per message, in order: ErrorCode 0 and a
        # MessageID when accepted, else the ErrorCode and Message of its refusal.
        return padded([_item_answer(entry) for entry in json_array(body)], count)

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"X-Postmark-Server-Token": api_key}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        value = json_object(body).get("MessageID")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        # {"ErrorCode": 300, "Message": "..."}
        return _error_text(json_object(body)) or plain_text(body)


def _message(email: OutgoingEmail) -> JsonObject:
    # Postmark's published description (Swagger 2.0) has no MessageStream field: the
    # server's default transactional stream, "outbound", is used.
    message: JsonObject = {
        "From": email.sender.formatted(),
        "To": ", ".join(box.formatted() for box in email.to),
        "Subject": email.subject,
        "HtmlBody": email.html,
    }
    if email.text is not None:
        message["TextBody"] = email.text
    if email.reply_to is not None:  # "Reply To override email address"
        message["ReplyTo"] = email.reply_to.formatted()
    if email.headers:  # a HeaderCollection: [{Name, Value}]
        message["Headers"] = [{"Name": name, "Value": value} for name, value in email.headers]
    return message


def _error_text(data: JsonObject) -> str:
    message, code = data.get("Message"), data.get("ErrorCode")
    if isinstance(message, str) and message:
        return clip(f"{message} (ErrorCode {code})" if isinstance(code, int) else message)
    return ""


def _item_answer(entry: object) -> ItemAnswer:
    if not isinstance(entry, dict):
        return ItemAnswer()
    code = entry.get("ErrorCode", 0)
    if isinstance(code, int) and code != 0:
        return ItemAnswer(refused=REFUSED, error=_error_text(entry) or f"ErrorCode {code}")
    value = entry.get("MessageID")
    return ItemAnswer(value if isinstance(value, str) and value else None)
