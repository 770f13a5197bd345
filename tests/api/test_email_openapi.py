"""The email endpoints in the OpenAPI document, and OPTIONS on their paths."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.adapters.mail.providers import PROVIDER_NAMES
from tests.api.support import Api, email_settings, json_schema_of, open_api, resolve_ref
from tests.support.envelope import (
    MESSAGE_FIELDS,
    MESSAGES,
    SEND,
    SEND_TEMPLATE,
    TEMPLATE,
    TEMPLATE_FIELDS,
    TEMPLATES,
    assert_ok,
)

MESSAGE = MESSAGES + "/{message_id}"
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
# The aliases the spec's samples use are served. POST /send-template is left out of the
# document; GET /template is in it as deprecated, since its path also takes POST.
EMAIL_PATHS: dict[str, set[str]] = {
    TEMPLATES: {"get", "post"},  # the list; createTemplate
    TEMPLATE: {"get", "post"},
    SEND: {"post"},
    MESSAGE: {"get"},
    MESSAGES: {"get"},  # the message log (issue 27)
    # An account's own templates (issue 26).
    TEMPLATES + "/{template_id}": {"get", "put", "delete"},
    TEMPLATES + "/{template_id}/versions": {"get"},
    TEMPLATES + "/{template_id}/versions/{version}": {"get"},
    TEMPLATES + "/{template_id}/preview": {"post"},
    TEMPLATES + "/{template_id}/test": {"post"},
}
SENDS = [SEND, TEMPLATE]
# Each send's errors, exactly: a plain send has no template to miss.
SEND_ERRORS = {
    SEND: {"400", "401", "403", "409", "413", "422", "429", "431", "500", "502", "503"},
    TEMPLATE: {"400", "401", "403", "404", "409", "413", "422", "429", "431", "500", "502", "503"},
}
REJECTED = {SEND: "SendRejectedEnvelope", TEMPLATE: "TemplateSendRejectedEnvelope"}
UNAVAILABLE = {SEND: "SendUnavailableEnvelope", TEMPLATE: "TemplateSendUnavailableEnvelope"}


def test_every_email_path_is_documented_with_its_methods(spec: dict[str, Any]) -> None:
    for path, methods in EMAIL_PATHS.items():
        assert path in spec["paths"], path
        assert {m for m in spec["paths"][path] if m in HTTP_METHODS} == methods, path
    documented = {p for p in spec["paths"] if p.startswith("/api/v1/email")}
    assert documented == set(EMAIL_PATHS)


def test_the_alias_of_the_template_list_is_documented_as_deprecated(spec: dict[str, Any]) -> None:
    alias = spec["paths"][TEMPLATE]["get"]

    assert alias["deprecated"] is True
    assert alias["operationId"] == "listTemplatesAlias"
    assert alias["responses"]["200"] == spec["paths"][TEMPLATES]["get"]["responses"]["200"]
    assert spec["paths"][TEMPLATES]["get"]["deprecated"] is False


def test_the_send_body_is_documented_with_from_as_its_wire_name(spec: dict[str, Any]) -> None:
    body = spec["paths"][SEND]["post"]["requestBody"]

    schema = json_schema_of(spec, body)
    assert body["required"] is True
    assert set(schema["properties"]) == {
        "to",
        "subject",
        "html",
        "from",
        "text",
        "reply_to",
        *FLAGS,
    }
    assert all(schema["properties"][flag]["type"] == "boolean" for flag in FLAGS)
    # No default sender is configured here: `from` must be sent.
    assert set(schema["required"]) == {"to", "subject", "html", "from"}


# What every send body may set beside its content (domain/suppressions.py, one-click
# unsubscribe): both false by default.
FLAGS = {"transactional", "list_unsubscribe"}


@pytest.mark.parametrize("path", [TEMPLATE])
def test_the_template_send_body_is_documented(spec: dict[str, Any], path: str) -> None:
    body = spec["paths"][path]["post"]["requestBody"]

    schema = json_schema_of(spec, body)
    assert body["required"] is True
    assert set(schema["properties"]) == {
        "to", "template_id", "variables", "from", "reply_to", *FLAGS,
    }  # fmt: skip
    assert set(schema["required"]) == {"to", "template_id", "from"}
    variables = schema["properties"]["variables"]
    assert variables["type"] == "object"
    assert variables["additionalProperties"] == {"type": "string"}


@pytest.mark.parametrize("path", SENDS)
def test_the_idempotency_key_header_is_documented(spec: dict[str, Any], path: str) -> None:
    parameters = spec["paths"][path]["post"].get("parameters", [])

    [key] = [p for p in parameters if p["name"] == "Idempotency-Key"]
    assert key["in"] == "header"
    assert key["required"] is False
    assert key["description"]


@pytest.mark.parametrize("path", SENDS)
def test_the_send_errors_are_documented(spec: dict[str, Any], path: str) -> None:
    responses = spec["paths"][path]["post"]["responses"]

    assert {s for s in responses if s != "200"} == SEND_ERRORS[path]
    typed = {
        # A plain send's 422 is also RECIPIENT_SUPPRESSED, which has no data.
        "422": "RefusedEnvelope" if path == SEND else "ValidationErrorEnvelope",
        "429": "TooManyEnvelope",  # RATE_LIMITED without data, QUOTA_EXCEEDED with
        "500": "InternalErrorEnvelope",
        "502": REJECTED[path],
        "503": UNAVAILABLE[path],  # the provider's, with data, or the database's, without
    }
    for status in SEND_ERRORS[path]:
        schema = responses[status]["content"]["application/json"]["schema"]
        expected = typed.get(status, "ErrorEnvelope")
        assert schema == {"$ref": f"#/components/schemas/{expected}"}, status


@pytest.mark.parametrize(("path", "status"), [(MESSAGE, "404"), (TEMPLATES, "401")])
def test_the_read_errors_are_documented(spec: dict[str, Any], path: str, status: str) -> None:
    assert status in spec["paths"][path]["get"]["responses"]


def test_success_bodies_describe_messages_and_templates(spec: dict[str, Any]) -> None:
    send = json_schema_of(spec, spec["paths"][SEND]["post"]["responses"]["200"])
    message = resolve_ref(spec, send["properties"]["data"])
    assert set(message["properties"]) == MESSAGE_FIELDS

    batch = json_schema_of(spec, spec["paths"][TEMPLATE]["post"]["responses"]["200"])
    messages = resolve_ref(spec, batch["properties"]["data"])
    assert set(messages["properties"]) == {"messages"}
    assert resolve_ref(spec, messages["properties"]["messages"]["items"]) == message

    listing = json_schema_of(spec, spec["paths"][TEMPLATES]["get"]["responses"]["200"])
    items = listing["properties"]["data"]
    assert items["type"] == "array"
    assert set(resolve_ref(spec, items["items"])["properties"]) == TEMPLATE_FIELDS


@pytest.mark.parametrize(
    ("path", "methods"),
    [
        (TEMPLATES, {"GET", "POST", "OPTIONS"}),
        (TEMPLATE, {"GET", "POST", "OPTIONS"}),
        (SEND, {"POST", "OPTIONS"}),
        (SEND_TEMPLATE, {"POST", "OPTIONS"}),
        (MESSAGES + "/msg_anything", {"GET", "OPTIONS"}),
        (MESSAGES, {"GET", "OPTIONS"}),
    ],
)
async def test_options_answers_the_envelope_with_every_method(
    api: Api, path: str, methods: set[str]
) -> None:
    for headers in (api.auth, {}):
        response = await api.client.options(path, headers=headers)

        body = assert_ok(response)
        assert set(body["data"]["methods"]) == methods
        listed = {m.strip() for m in response.headers.get("allow", "").split(",")}
        assert listed == methods, f"Allow: {response.headers.get('allow')!r}"


async def test_with_a_default_sender_from_is_optional() -> None:
    settings = email_settings(email_default_from="School <school@example.com>")
    async with open_api(settings=settings) as api:
        spec = (await api.client.get("/schema/openapi.json")).json()

    for path in SENDS:
        schema = json_schema_of(spec, spec["paths"][path]["post"]["requestBody"])
        assert "from" not in schema["required"], path
        assert "from" in schema["properties"], path


def test_the_rules_of_each_body_are_stated(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    lead, send = schemas["NewLead"]["properties"], schemas["SendEmailRequest"]["properties"]

    assert lead["email"]["format"] == "email"
    assert lead["email"]["maxLength"] == 254
    assert lead["note"]["maxLength"] == 10_000
    assert lead["phone"]["maxLength"] == 32
    assert "pattern" in lead["name"]
    to_one, to_many = send["to"]["oneOf"]
    assert to_one["format"] == "email"
    assert (to_many["minItems"], to_many["maxItems"]) == (1, 50)
    assert send["subject"]["maxLength"] == 998
    [key] = [p for p in spec["paths"][SEND]["post"]["parameters"] if p["name"] == "Idempotency-Key"]
    assert (key["schema"]["minLength"], key["schema"]["maxLength"]) == (1, 256)


def test_a_messages_status_and_provider_are_closed_lists(spec: dict[str, Any]) -> None:
    message = spec["components"]["schemas"]["Message"]["properties"]

    status = resolve_ref(spec, message["status"])
    assert sorted(status["enum"]) == [
        "bounced", "complained", "delivered", "failed", "pending", "sent", "suppressed"
    ]  # fmt: skip
    # Every provider a stored message may name: each known one, and the one configured
    # (these tests run on the recording provider).
    assert set(message["provider"]["enum"]) == {*PROVIDER_NAMES, "recording"}
