"""The HTTP API as a client sees it, for the api/ and e2e/ suites alike: the paths, the
fields of each record, the Authorization header, and checks of the envelope every answer
comes in. Both suites hold ``httpx.Response`` objects (Litestar's test client is httpx).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

LEADS = "/api/v1/leads"
IMPORTS = LEADS + "/imports"
EXPORT = LEADS + "/export"
ACTIONS = LEADS + "/actions"
EMAIL = "/api/v1/email"
TEMPLATES = EMAIL + "/templates"
SEND = EMAIL + "/send"
TEMPLATE = EMAIL + "/template"
SEND_TEMPLATE = EMAIL + "/send-template"
MESSAGES = EMAIL + "/messages"
CAMPAIGNS = "/api/v1/campaigns"
SUPPRESSIONS = "/api/v1/suppressions"
PRIVACY = "/api/v1/privacy"
PRIVACY_EXPORT = PRIVACY + "/export"
PRIVACY_ERASE = PRIVACY + "/erase"

LEAD_FIELDS = {
    "lead_id",
    "name",
    "email",
    "source",
    "note",
    "phone",
    "tags",
    "fields",
    "created_at",
    "updated_at",
}
MESSAGE_FIELDS = {
    "id",
    "status",
    "provider",
    "provider_message_id",
    "to",
    "from",
    "subject",
    "template_id",
    "template_version",
    "test",
    "campaign_id",
    "attempts",
    "last_error",
    "created_at",
    "updated_at",
    "events",
}
# One of a message's events, as its provider reported it (webhooks).
MESSAGE_EVENT_FIELDS = {"type", "bounce", "at", "detail"}
# The spec's fields, then what templates per account added (issue 26).
TEMPLATE_FIELDS = {"id", "name", "subject", "body", "variables", "created_at"} | {
    "owner",
    "kind",
    "version",
    "updated_at",
    "text",
    "layout_id",
    "inline_css",
}
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def bearer(secret: str) -> dict[str, str]:
    """The Authorization header that presents an API key."""
    return {"Authorization": f"Bearer {secret}"}


def assert_ok(response: httpx.Response) -> dict[str, Any]:
    """The success envelope: exactly HTTP 200, success true, error empty, a message, a
    ``data`` member. Returns the whole body."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body, dict), body
    assert body["success"] is True, body
    assert body["error"] == "", body
    assert isinstance(body["message"], str), body
    assert body["message"], body
    assert "data" in body, body
    return body


def ok_data(response: httpx.Response) -> Any:
    """``assert_ok``, returning the envelope's ``data``."""
    return assert_ok(response)["data"]


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The failure envelope: the status, JSON, success false, a message, a non-empty error,
    the code. Returns the whole body."""
    assert response.status_code == status, response.text
    assert response.headers.get("content-type", "").startswith("application/json"), response.headers
    body = response.json()
    assert isinstance(body, dict), body
    assert body["success"] is False, body
    assert isinstance(body["message"], str), body
    assert body["message"], body
    assert isinstance(body["error"], str), body
    assert body["error"], body
    assert body["code"] == code, body
    return body


def assert_invalid(response: httpx.Response, field: str) -> dict[str, Any]:
    """A 422 whose ``data.errors`` is a list of {field, message} naming ``field``."""
    body = assert_error(response, 422, "VALIDATION_FAILED")
    errors = body["data"]["errors"]
    assert isinstance(errors, list)
    assert errors
    for entry in errors:
        assert set(entry) == {"field", "message"}
        assert isinstance(entry["field"], str)
        assert isinstance(entry["message"], str)
        assert entry["message"]
    assert field in [e["field"] for e in errors], errors
    assert field in body["error"]
    return body


def message_for(body: dict[str, Any], field: str) -> str:
    """The message of the 422 entry that names ``field``."""
    return next(str(e["message"]) for e in body["data"]["errors"] if e["field"] == field)


def assert_message(message: dict[str, Any]) -> None:
    """One email-log record on the wire: every field, with its type."""
    assert set(message) == MESSAGE_FIELDS
    assert isinstance(message["id"], str)
    assert message["id"]
    assert message["status"] in (
        "pending",
        "sent",
        "failed",
        "suppressed",
        "delivered",
        "bounced",
        "complained",
    )
    assert isinstance(message["events"], list)
    for event in message["events"]:
        assert set(event) == MESSAGE_EVENT_FIELDS
        assert ISO_UTC.match(event["at"]), event["at"]
    assert isinstance(message["to"], list)
    assert all(isinstance(address, str) for address in message["to"])
    assert isinstance(message["attempts"], int)
    assert isinstance(message["last_error"], str)
    assert ISO_UTC.match(message["created_at"]), message["created_at"]
    assert ISO_UTC.match(message["updated_at"]), message["updated_at"]
