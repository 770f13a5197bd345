"""POST /api/v1/email/send: one message to every address in `to`, validated before
anything reaches the provider."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.domain.email import Mailbox
from tests.api.support import SENDER, Api, email_settings, open_api, plain_email, recorder
from tests.support.envelope import SEND, assert_error, assert_invalid, assert_message, assert_ok


def _addresses(boxes: tuple[Mailbox, ...]) -> list[str]:
    return [box.address for box in boxes]


async def test_a_send_is_the_envelope_of_the_sent_message(api: Api) -> None:
    body = plain_email()

    response = await api.client.post(SEND, json=body, headers=api.auth)

    envelope = assert_ok(response)
    assert envelope["message"] == "Email sent"
    message = envelope["data"]
    assert_message(message)
    assert message["id"].startswith("msg_")
    assert message["status"] == "sent"
    assert message["provider"] == "recording"
    assert message["provider_message_id"] == "rec-1"
    assert message["to"] == ["ada@example.com"]
    assert message["from"] == SENDER
    assert message["subject"] == body["subject"]
    assert message["template_id"] is None
    assert message["attempts"] == 1
    assert message["last_error"] == ""
    assert "Idempotent-Replayed" not in response.headers
    [delivered] = recorder(api).delivered
    assert delivered.message_id == message["id"]
    assert delivered.email.sender == Mailbox(SENDER)
    assert _addresses(delivered.email.to) == ["ada@example.com"]
    assert delivered.email.subject == body["subject"]
    assert delivered.email.html == body["html"]


async def test_to_may_be_an_array_of_recipients_of_one_message(api: Api) -> None:
    to = ["ada@example.com", "grace@example.com", "alan@example.com"]

    message = assert_ok(await api.client.post(SEND, json=plain_email(to=to), headers=api.auth))[
        "data"
    ]

    assert message["to"] == to
    [delivered] = recorder(api).delivered
    assert _addresses(delivered.email.to) == to


async def test_fifty_recipients_are_accepted(api: Api) -> None:
    to = [f"student{i}@example.com" for i in range(50)]

    message = assert_ok(await api.client.post(SEND, json=plain_email(to=to), headers=api.auth))[
        "data"
    ]

    assert message["to"] == to
    assert len(recorder(api).delivered) == 1


@pytest.mark.parametrize(
    "to", [[f"student{i}@example.com" for i in range(51)], []], ids=["51 recipients", "none"]
)
async def test_too_many_or_no_recipients_are_refused(api: Api, to: list[str]) -> None:
    response = await api.client.post(SEND, json=plain_email(to=to), headers=api.auth)

    assert_invalid(response, "to")
    assert recorder(api).delivered == []


async def test_a_name_and_address_form_is_accepted_for_to_and_from(api: Api) -> None:
    body = plain_email(
        to=["Ada Lovelace <ada@example.com>", "grace@example.com"],
        **{"from": "Northwind Academy <school@example.com>"},
    )

    message = assert_ok(await api.client.post(SEND, json=body, headers=api.auth))["data"]

    assert message["to"] == ['"Ada Lovelace" <ada@example.com>', "grace@example.com"]
    assert message["from"] == '"Northwind Academy" <school@example.com>'
    [delivered] = recorder(api).delivered
    assert delivered.email.to == (
        Mailbox("ada@example.com", "Ada Lovelace"),
        Mailbox("grace@example.com"),
    )
    assert delivered.email.sender == Mailbox("school@example.com", "Northwind Academy")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"subject": "Hello\r\nBcc: everyone@example.com"}, "subject"),
        ({"subject": "Hello\nBcc: everyone@example.com"}, "subject"),
        ({"to": "ada@example.com\r\nBcc: everyone@example.com"}, "to"),
        ({"to": ["grace@example.com", "ada@example.com\nBcc: everyone@example.com"]}, "to[1]"),
        ({"from": "school@example.com\r\nBcc: everyone@example.com"}, "from"),
        ({"from": "School\r\n <school@example.com>"}, "from"),
    ],
    ids=["CRLF subject", "LF subject", "CRLF to", "LF to[1]", "CRLF from", "CRLF from name"],
)
async def test_line_breaks_in_a_header_field_are_refused(
    api: Api, fields: dict[str, Any], field: str
) -> None:
    response = await api.client.post(SEND, json=plain_email(**fields), headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


async def test_every_invalid_address_is_named_by_its_position(api: Api) -> None:
    to = ["ada@example.com", "not-an-address", "grace@example.com", "bob@"]

    response = await api.client.post(SEND, json=plain_email(to=to), headers=api.auth)

    body = assert_invalid(response, "to[1]")
    assert {e["field"] for e in body["data"]["errors"]} == {"to[1]", "to[3]"}
    assert recorder(api).delivered == []


async def test_a_single_invalid_address_is_named_to(api: Api) -> None:
    response = await api.client.post(SEND, json=plain_email(to="nobody"), headers=api.auth)

    assert_invalid(response, "to")
    assert recorder(api).delivered == []


async def test_an_invalid_from_is_named(api: Api) -> None:
    response = await api.client.post(
        SEND, json=plain_email(**{"from": "school-at-example.com"}), headers=api.auth
    )

    assert_invalid(response, "from")
    assert recorder(api).delivered == []


@pytest.mark.parametrize("field", ["html", "subject", "to"])
async def test_a_missing_required_field_is_named(api: Api, field: str) -> None:
    body = plain_email()
    del body[field]

    response = await api.client.post(SEND, json=body, headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


@pytest.mark.parametrize("field", ["html", "subject"])
async def test_a_blank_html_or_subject_is_refused(api: Api, field: str) -> None:
    response = await api.client.post(SEND, json=plain_email(**{field: "   "}), headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


@pytest.mark.parametrize("field", ["cc", "sender", "template_id"])
async def test_an_unknown_field_is_refused(api: Api, field: str) -> None:
    """`from` is the wire name; the Python attribute name `sender` is not accepted."""
    body = plain_email(**{field: "grace@example.com"})

    response = await api.client.post(SEND, json=body, headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


async def test_a_send_needs_a_key() -> None:
    async with open_api() as api:
        response = await api.client.post(SEND, json=plain_email())

        assert_error(response, 401, "UNAUTHORIZED")
        assert recorder(api).delivered == []


async def test_without_from_the_configured_default_sender_is_used() -> None:
    default = "Northwind Academy <hello@example.com>"
    async with open_api(settings=email_settings(email_default_from=default)) as api:
        response = await api.client.post(SEND, json=plain_email(**{"from": None}), headers=api.auth)

        message = assert_ok(response)["data"]
        assert message["from"] == '"Northwind Academy" <hello@example.com>'
        [delivered] = recorder(api).delivered
        assert delivered.email.sender == Mailbox("hello@example.com", "Northwind Academy")


async def test_an_explicit_from_wins_over_the_default_sender() -> None:
    async with open_api(settings=email_settings(email_default_from="hello@example.com")) as api:
        response = await api.client.post(SEND, json=plain_email(), headers=api.auth)

        assert assert_ok(response)["data"]["from"] == SENDER


async def test_without_from_and_without_a_default_sender_from_is_required(api: Api) -> None:
    response = await api.client.post(SEND, json=plain_email(**{"from": None}), headers=api.auth)

    assert_invalid(response, "from")
    assert recorder(api).delivered == []


async def test_a_sender_outside_the_allowed_domains_is_forbidden() -> None:
    settings = email_settings(allowed_sender_domains=("example.org",))
    async with open_api(settings=settings) as api:
        refused = await api.client.post(SEND, json=plain_email(), headers=api.auth)

        body = assert_error(refused, 403, "SENDER_NOT_ALLOWED")
        assert "example.com" in body["error"]
        assert recorder(api).delivered == []

        allowed = await api.client.post(
            SEND, json=plain_email(**{"from": "office@example.org"}), headers=api.auth
        )
        assert assert_ok(allowed)["data"]["from"] == "office@example.org"
        assert len(recorder(api).delivered) == 1


async def test_the_default_sender_is_held_to_the_allowed_domains_too() -> None:
    settings = email_settings(
        allowed_sender_domains=("example.org",), email_default_from="hello@example.com"
    )
    async with open_api(settings=settings) as api:
        response = await api.client.post(SEND, json=plain_email(**{"from": None}), headers=api.auth)

        assert_error(response, 403, "SENDER_NOT_ALLOWED")
        assert recorder(api).delivered == []


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"to": ["ada@example.com", 5]}, "to[1]"),
        ({"to": 5}, "to"),
        ({"subject": 5}, "subject"),
        ({"html": "<p>a\x00b</p>"}, "html"),
        ({"subject": "Hello\u2028Bcc: everyone@example.com"}, "subject"),
    ],
    ids=["non-string to[1]", "number to", "number subject", "NUL html", "U+2028 subject"],
)
async def test_a_wrong_type_or_character_is_named(
    api: Api, fields: dict[str, Any], field: str
) -> None:
    response = await api.client.post(SEND, json=plain_email(**fields), headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


async def test_malformed_json_is_a_400(api: Api) -> None:
    response = await api.client.post(
        SEND,
        content=b'{"to": "ada@example.com",',
        headers={**api.auth, "Content-Type": "application/json"},
    )

    assert_error(response, 400, "MALFORMED_JSON")
    assert recorder(api).delivered == []


async def test_a_body_over_the_size_limit_is_a_413() -> None:
    async with open_api(settings=email_settings(max_body_bytes=2048)) as api:
        response = await api.client.post(
            SEND, json=plain_email(html="<p>" + "x" * 4096 + "</p>"), headers=api.auth
        )

        assert_error(response, 413, "PAYLOAD_TOO_LARGE")
        assert recorder(api).delivered == []


async def test_another_method_on_send_is_a_405_with_allow(api: Api) -> None:
    response = await api.client.get(SEND, headers=api.auth)

    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert {m.strip() for m in response.headers["allow"].split(",")} == {"POST", "OPTIONS"}
