"""POST /api/v1/email/template (alias /send-template): one message per recipient, built
from a packaged template, its values escaped in the HTML and plain in the subject."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.domain.email import Mailbox
from tests.api.support import SENDER, Api, email_settings, open_api, recorder, welcome_email
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import (
    SEND_TEMPLATE,
    TEMPLATE,
    assert_error,
    assert_invalid,
    assert_message,
    assert_ok,
)

PATHS = [TEMPLATE, SEND_TEMPLATE]
RECIPIENTS = ["ada@example.com", "grace@example.com", "alan@example.com"]


@pytest.mark.parametrize("path", PATHS)
async def test_each_recipient_gets_a_message_of_their_own(api: Api, path: str) -> None:
    response = await api.client.post(path, json=welcome_email(to=RECIPIENTS), headers=api.auth)

    body = assert_ok(response)
    assert body["message"] == "Email sent to 3 recipients"
    assert set(body["data"]) == {"messages"}
    messages = body["data"]["messages"]
    assert [m["to"] for m in messages] == [[address] for address in RECIPIENTS]
    for message in messages:
        assert_message(message)
        assert message["status"] == "sent"
        assert message["template_id"] == "welcome"
        assert message["from"] == SENDER
        assert message["subject"] == "Welcome to Northwind Academy, Ada"
        assert message["attempts"] == 1
        assert message["last_error"] == ""
        assert message["provider"] == "recording"
        assert message["provider_message_id"]
    assert len({m["id"] for m in messages}) == 3
    delivered = recorder(api).delivered
    # Recipients never see each other: every email carries exactly one address.
    assert len(delivered) == 3
    assert all(len(d.email.to) == 1 for d in delivered)
    assert sorted(d.email.to[0].address for d in delivered) == sorted(RECIPIENTS)
    assert {d.message_id: d.email.to[0].address for d in delivered} == {
        m["id"]: m["to"][0] for m in messages
    }
    for d in delivered:
        assert d.email.sender == Mailbox(SENDER)
        assert d.email.subject == "Welcome to Northwind Academy, Ada"
        assert "Northwind Academy" in d.email.html
        assert "https://example.com/courses" in d.email.html
        assert "{{" not in d.email.html


async def test_a_single_string_recipient_is_one_message(api: Api) -> None:
    response = await api.client.post(
        TEMPLATE, json=welcome_email(to="Ada Lovelace <ada@example.com>"), headers=api.auth
    )

    body = assert_ok(response)
    assert body["message"] == "Email sent"
    [message] = body["data"]["messages"]
    assert message["to"] == ['"Ada Lovelace" <ada@example.com>']
    [delivered] = recorder(api).delivered
    assert delivered.email.to == (Mailbox("ada@example.com", "Ada Lovelace"),)


async def test_values_are_escaped_in_the_html_and_plain_in_the_subject(api: Api) -> None:
    name = '<script>alert("x")</script> & Co'
    variables = {**WELCOME_VARIABLES, "first_name": name}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    [message] = assert_ok(response)["data"]["messages"]
    assert message["subject"] == f"Welcome to Northwind Academy, {name}"
    [delivered] = recorder(api).delivered
    assert delivered.email.subject == f"Welcome to Northwind Academy, {name}"
    assert "<script>" not in delivered.email.html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; Co" in delivered.email.html


async def test_a_value_cannot_break_out_of_an_attribute(api: Api) -> None:
    link = 'https://example.com/" onclick="steal()'
    variables = {**WELCOME_VARIABLES, "courses_link": link}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    assert_ok(response)
    [delivered] = recorder(api).delivered
    assert 'onclick="steal()' not in delivered.email.html
    assert "https://example.com/&#34; onclick=&#34;steal()" in delivered.email.html


async def test_every_missing_variable_is_named_and_nothing_is_sent(api: Api) -> None:
    variables = {"school_name": "Northwind Academy", "first_name": "Ada"}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(to=RECIPIENTS, variables=variables), headers=api.auth
    )

    body = assert_invalid(response, "variables.courses_link")
    assert {e["field"] for e in body["data"]["errors"]} == {
        "variables.courses_link",
        "variables.contact_email",
    }
    assert "variables.contact_email" in body["error"]
    assert recorder(api).delivered == []
    assert recorder(api).attempts == 0


async def test_no_variables_at_all_names_every_variable(api: Api) -> None:
    response = await api.client.post(TEMPLATE, json=welcome_email(variables=None), headers=api.auth)

    body = assert_invalid(response, "variables.school_name")
    assert [e["field"] for e in body["data"]["errors"]] == [
        f"variables.{name}"
        for name in ("school_name", "first_name", "courses_link", "contact_email")
    ]
    assert recorder(api).delivered == []


async def test_extra_variables_are_ignored(api: Api) -> None:
    variables = {**WELCOME_VARIABLES, "unused_secret": "EXTRA-VALUE-123"}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    [message] = assert_ok(response)["data"]["messages"]
    assert message["status"] == "sent"
    [delivered] = recorder(api).delivered
    assert "EXTRA-VALUE-123" not in delivered.email.html
    assert "EXTRA-VALUE-123" not in delivered.email.subject


async def test_an_unknown_template_is_a_404_and_nothing_is_sent(api: Api) -> None:
    response = await api.client.post(
        TEMPLATE, json=welcome_email(template_id="no-such-template"), headers=api.auth
    )

    body = assert_error(response, 404, "TEMPLATE_NOT_FOUND")
    assert "no-such-template" in body["error"]
    assert recorder(api).delivered == []
    assert recorder(api).attempts == 0


@pytest.mark.parametrize(
    "value", [5, None, True, ["Ada"], {"first": "Ada"}], ids=["int", "null", "bool", "list", "dict"]
)
async def test_a_non_string_variable_value_is_refused(api: Api, value: Any) -> None:
    variables = {**WELCOME_VARIABLES, "first_name": value}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    body = assert_error(response, 422, "VALIDATION_FAILED")
    fields = [e["field"] for e in body["data"]["errors"]]
    assert fields
    assert all(f.startswith("variables") for f in fields), fields
    assert recorder(api).delivered == []


async def test_variables_must_be_an_object(api: Api) -> None:
    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=["Ada"]), headers=api.auth
    )

    assert_invalid(response, "variables")
    assert recorder(api).delivered == []


async def test_a_line_break_in_a_subject_variable_is_refused(api: Api) -> None:
    variables = {**WELCOME_VARIABLES, "first_name": "Ada\r\nBcc: everyone@example.com"}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    assert_invalid(response, "variables.first_name")
    assert recorder(api).delivered == []


async def test_a_line_break_in_a_body_only_variable_is_kept_in_the_html(api: Api) -> None:
    variables = {**WELCOME_VARIABLES, "contact_email": "hello@example.com\nor call us"}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    assert_ok(response)
    [delivered] = recorder(api).delivered
    assert "hello@example.com\nor call us" in delivered.email.html


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"to": []}, "to"),
        ({"to": [f"s{i}@example.com" for i in range(51)]}, "to"),
        ({"to": ["ada@example.com", "nobody"]}, "to[1]"),
        ({"to": "ada@example.com\r\nBcc: everyone@example.com"}, "to"),
        ({"from": "school@example.com\r\nBcc: everyone@example.com"}, "from"),
        ({"template_id": None}, "template_id"),
        ({"cc": "grace@example.com"}, "cc"),
    ],
    ids=["no recipients", "51 recipients", "bad to[1]", "CRLF to", "CRLF from", "no id", "cc"],
)
async def test_an_invalid_request_is_refused_before_sending(
    api: Api, fields: dict[str, Any], field: str
) -> None:
    response = await api.client.post(TEMPLATE, json=welcome_email(**fields), headers=api.auth)

    assert_invalid(response, field)
    assert recorder(api).delivered == []


async def test_without_from_and_without_a_default_sender_from_is_required(api: Api) -> None:
    response = await api.client.post(
        TEMPLATE, json=welcome_email(**{"from": None}), headers=api.auth
    )

    assert_invalid(response, "from")
    assert recorder(api).delivered == []


async def test_without_from_the_default_sender_is_used() -> None:
    async with open_api(settings=email_settings(email_default_from="hello@example.com")) as api:
        response = await api.client.post(
            TEMPLATE, json=welcome_email(to=RECIPIENTS, **{"from": None}), headers=api.auth
        )

        messages = assert_ok(response)["data"]["messages"]
        assert {m["from"] for m in messages} == {"hello@example.com"}
        assert {d.email.sender for d in recorder(api).delivered} == {Mailbox("hello@example.com")}


async def test_a_sender_outside_the_allowed_domains_is_forbidden() -> None:
    async with open_api(settings=email_settings(allowed_sender_domains=("example.org",))) as api:
        response = await api.client.post(
            TEMPLATE, json=welcome_email(to=RECIPIENTS), headers=api.auth
        )

        assert_error(response, 403, "SENDER_NOT_ALLOWED")
        assert recorder(api).delivered == []


async def test_a_nul_in_a_body_variable_is_refused_as_in_a_plain_html(api: Api) -> None:
    """POST /email/send refuses NUL in `html` (422 `html`). A template's values end up in
    the same HTML, so a NUL in one is refused too, naming the variable; nothing is sent.

    Fails today: the template send answers 200 and the provider receives HTML with a NUL."""
    variables = {**WELCOME_VARIABLES, "contact_email": "hello@example.com\x00"}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    with_nul = sum("\x00" in d.email.html for d in recorder(api).delivered)
    assert_invalid(response, "variables.contact_email")
    assert with_nul == 0, "HTML with a NUL reached the provider"


async def test_a_value_that_makes_the_subject_too_long_is_named_as_the_variable(
    api: Api,
) -> None:
    """A template request has no `subject` field: when a value pushes the rendered subject
    over 998 characters, the error names the variable the client can shorten.

    Fails today: the 422 names `subject`, a field the request does not have."""
    variables = {**WELCOME_VARIABLES, "school_name": "N" * 1000}

    response = await api.client.post(
        TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )

    assert_invalid(response, "variables.school_name")
    assert recorder(api).delivered == []
