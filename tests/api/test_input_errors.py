"""Bad bodies: 400 for what is not JSON, 422 (naming the field) for JSON that breaks a rule,
413 for too much of it. Nothing is stored after any of them."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from litestar.types import HTTPReceiveMessage, Message, Receive, Scope, Send

from leadmail.config import Settings
from tests.api.support import Api, open_api
from tests.support.envelope import LEADS, assert_error, assert_invalid, assert_ok, message_for

JSON = {"Content-Type": "application/json"}
VALID = {"name": "Ada", "email": "ada@example.com"}

# id -> (raw body, expected status, expected code)
UNPARSABLE: dict[str, tuple[bytes, int, str]] = {
    "malformed": (b'{"name": "Ada",', 400, "MALFORMED_JSON"),
    "not-json-at-all": (b"name=Ada&email=ada@example.com", 400, "MALFORMED_JSON"),
    "trailing-garbage": (b'{"name": "Ada", "email": "ada@example.com"} x', 400, "MALFORMED_JSON"),
    "empty": (b"", 400, "MALFORMED_JSON"),
}

# id -> (JSON body, field the 422 must name, text its message must contain or "")
POST_INVALID: dict[str, tuple[Any, str, str]] = {
    "array-body": ([VALID], "body", ""),
    "null-body": (None, "body", ""),
    "string-body": ("Ada", "body", ""),
    "name-wrong-type": ({"name": 1, "email": "ada@example.com"}, "name", ""),
    "email-wrong-type": ({"name": "Ada", "email": ["ada@example.com"]}, "email", ""),
    "note-null": ({**VALID, "note": None}, "note", ""),
    "name-missing": ({"email": "ada@example.com"}, "name", "required"),
    "email-missing": ({"name": "Ada"}, "email", "required"),
    "unknown-field": ({**VALID, "fax": "123"}, "fax", ""),
    "lead_id-read-only": ({**VALID, "lead_id": "ld_mine"}, "lead_id", "cannot"),
    "created_at-read-only": (
        {**VALID, "created_at": "2020-01-01T00:00:00Z"},
        "created_at",
        "cannot",
    ),
    "updated_at-read-only": (
        {**VALID, "updated_at": "2020-01-01T00:00:00Z"},
        "updated_at",
        "cannot",
    ),
    "account_id-read-only": ({**VALID, "account_id": "acc_x"}, "account_id", "cannot"),
    "invalid-email": ({"name": "Ada", "email": "not-an-email"}, "email", ""),
    "email-two-ats": ({"name": "Ada", "email": "a@b@example.com"}, "email", ""),
    "email-blank": ({"name": "Ada", "email": "   "}, "email", ""),
    "email-header-injection": (
        {"name": "Ada", "email": "ada@example.com\r\nBcc: x@evil.test"},
        "email",
        "",
    ),
    "name-blank": ({"name": "   ", "email": "ada@example.com"}, "name", ""),
    "name-crlf": ({"name": "Ada\r\nBcc: x@evil.test", "email": "ada@example.com"}, "name", ""),
    "name-lf": ({"name": "Ada\nLovelace", "email": "ada@example.com"}, "name", ""),
    "name-nul": ({"name": "Ada\x00", "email": "ada@example.com"}, "name", ""),
    "note-nul": ({**VALID, "note": "hello\x00world"}, "note", ""),
    "source-crlf": ({**VALID, "source": "ads\r\nX: y"}, "source", ""),
    "name-201-chars": ({"name": "n" * 201, "email": "ada@example.com"}, "name", "200"),
    "source-101-chars": ({**VALID, "source": "s" * 101}, "source", "100"),
    "note-10001-chars": ({**VALID, "note": "x" * 10_001}, "note", "10000"),
}

# Every case that makes sense for a partial update; ``{}`` and explicit nulls too.
PUT_INVALID: dict[str, tuple[Any, str, str]] = {
    "empty-object": ({}, "body", ""),
    **{
        key: value
        for key, value in POST_INVALID.items()
        if key not in ("name-missing", "email-missing", "null-body")
    },
}


async def test_unparsable_bodies_are_400_malformed_json_on_post(api: Api) -> None:
    for label, (raw, status, code) in UNPARSABLE.items():
        response = await api.client.post(LEADS, content=raw, headers={**api.auth, **JSON})
        assert response.status_code == status, label
        assert_error(response, status, code)
    assert await api.all_leads() == []


async def test_unparsable_bodies_are_400_malformed_json_on_put(api: Api) -> None:
    lead = await api.add_lead()
    for label, (raw, status, code) in UNPARSABLE.items():
        response = await api.client.put(
            f"{LEADS}/{lead['lead_id']}", content=raw, headers={**api.auth, **JSON}
        )
        assert response.status_code == status, label
        assert_error(response, status, code)
    assert await api.all_leads() == [lead]


@pytest.mark.parametrize(
    ("body", "field", "says"), list(POST_INVALID.values()), ids=list(POST_INVALID)
)
async def test_an_invalid_new_lead_is_422_naming_the_field_and_nothing_is_stored(
    api: Api, body: Any, field: str, says: str
) -> None:
    existing = await api.add_lead(email="existing@example.com")

    response = await api.client.post(LEADS, content=json.dumps(body), headers={**api.auth, **JSON})

    result = assert_invalid(response, field)
    assert says in message_for(result, field)
    assert await api.all_leads() == [existing]


@pytest.mark.parametrize(
    ("body", "field", "says"), list(PUT_INVALID.values()), ids=list(PUT_INVALID)
)
async def test_an_invalid_update_is_422_naming_the_field_and_changes_nothing(
    api: Api, body: Any, field: str, says: str
) -> None:
    lead = await api.add_lead()

    response = await api.client.put(
        f"{LEADS}/{lead['lead_id']}", content=json.dumps(body), headers={**api.auth, **JSON}
    )

    result = assert_invalid(response, field)
    assert says in message_for(result, field)
    assert await api.all_leads() == [lead]


async def test_every_broken_field_is_listed_not_only_the_first(api: Api) -> None:
    response = await api.client.post(
        LEADS, json={"name": " ", "email": "nope", "note": "a\x00b"}, headers=api.auth
    )

    body = assert_invalid(response, "name")
    assert {e["field"] for e in body["data"]["errors"]} == {"name", "email", "note"}


async def test_an_update_with_one_bad_field_does_not_half_apply(api: Api) -> None:
    lead = await api.add_lead(name="Ada", email="ada@example.com")

    response = await api.client.put(
        f"{LEADS}/{lead['lead_id']}",
        json={"name": "Renamed", "note": "changed", "email": "broken"},
        headers=api.auth,
    )

    assert_invalid(response, "email")
    assert await api.all_leads() == [lead]


async def test_the_422_message_for_a_read_only_field_differs_from_an_unknown_one(
    api: Api,
) -> None:
    read_only = await api.client.post(LEADS, json={**VALID, "lead_id": "x"}, headers=api.auth)
    unknown = await api.client.post(LEADS, json={**VALID, "colour": "x"}, headers=api.auth)

    assert message_for(assert_invalid(read_only, "lead_id"), "lead_id") != message_for(
        assert_invalid(unknown, "colour"), "colour"
    )


LIMIT = 2_000


def _body_of_size(size: int) -> bytes:
    """A valid lead whose JSON encoding is exactly ``size`` bytes."""
    empty = json.dumps({**VALID, "note": ""}, separators=(",", ":")).encode()
    raw = json.dumps({**VALID, "note": "x" * (size - len(empty))}, separators=(",", ":")).encode()
    assert len(raw) == size
    return raw


@pytest.mark.parametrize("method", ["POST", "PUT"])
async def test_a_body_over_max_body_bytes_is_413(method: str) -> None:
    async with open_api(settings=Settings(migrate_on_start=False, max_body_bytes=LIMIT)) as api:
        lead = await api.add_lead()
        url = LEADS if method == "POST" else f"{LEADS}/{lead['lead_id']}"

        response = await api.client.request(
            method, url, content=_body_of_size(LIMIT + 1), headers={**api.auth, **JSON}
        )

        assert_error(response, 413, "PAYLOAD_TOO_LARGE")
        assert await api.all_leads() == [lead]


async def test_a_body_of_exactly_max_body_bytes_is_accepted() -> None:
    async with open_api(settings=Settings(migrate_on_start=False, max_body_bytes=LIMIT)) as api:
        response = await api.client.post(
            LEADS, content=_body_of_size(LIMIT), headers={**api.auth, **JSON}
        )

        assert_ok(response)


async def test_a_chunked_body_over_max_body_bytes_is_413() -> None:
    """No Content-Length: the limit must hold while the body streams in. The test client
    cannot stream, so this speaks ASGI to the app directly."""
    async with open_api(settings=Settings(migrate_on_start=False, max_body_bytes=LIMIT)) as api:
        chunks = [b'{"name":"Ada","email":"ada@example.com","note":"', *[b"x" * 500] * 6, b'"}']
        pending: list[HTTPReceiveMessage] = [
            {"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks
        ]
        pending.append({"type": "http.request", "body": b"", "more_body": False})
        sent: list[Message] = []

        async def receive() -> HTTPReceiveMessage:
            if pending:
                return pending.pop(0)
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": LEADS,
            "raw_path": LEADS.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [
                (b"host", b"testserver"),
                (b"content-type", b"application/json"),
                (b"transfer-encoding", b"chunked"),
                (b"authorization", f"Bearer {api.key.secret}".encode()),
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
            "state": {},
        }

        await api.client.app(cast(Scope, scope), cast(Receive, receive), cast(Send, send))

        start = next(m for m in sent if m["type"] == "http.response.start")
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        assert start["status"] == 413
        assert json.loads(body)["code"] == "PAYLOAD_TOO_LARGE"
        assert await api.all_leads() == []
