"""The OpenAPI document at /schema/openapi.json describes what the service really does."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar._openapi.plugin import OpenAPIPlugin

from leadmail.config import Settings
from leadmail.domain.lead_listing import CURSOR
from tests.api.support import Api, json_schema_of, open_api, resolve_ref
from tests.support.envelope import LEAD_FIELDS, LEADS

ONE = LEADS + "/{lead_id}"
CLIENT_FIELDS = {"name", "email", "source", "note", "phone", "tags", "fields"}
COUNT = LEADS + "/count"
TAGS = ONE + "/tags"

# path, method -> exactly the error statuses documented (422 on every operation: a query
# parameter it does not take, an id of the wrong shape)
DOCUMENTED_ERRORS: dict[tuple[str, str], set[str]] = {
    (LEADS, "post"): {"400", "401", "409", "413", "422", "429", "431", "500", "503"},
    (LEADS, "get"): {"401", "422", "429", "431", "500", "503"},
    (ONE, "get"): {"401", "404", "422", "429", "431", "500", "503"},
    (ONE, "put"): {"400", "401", "404", "409", "413", "422", "429", "431", "500", "503"},
    (ONE, "delete"): {"401", "404", "422", "429", "431", "500", "503"},
    (COUNT, "get"): {"401", "422", "429", "431", "500", "503"},
    (TAGS, "post"): {"400", "401", "404", "413", "422", "429", "431", "500", "503"},
}
# The envelope of each status whose data is typed; the rest are ErrorEnvelope.
TYPED_ERRORS = {
    "409": "LeadExistsEnvelope",
    "422": "ValidationErrorEnvelope",
    "500": "InternalErrorEnvelope",
}
OPERATIONS = list(DOCUMENTED_ERRORS)
OPERATION_IDS = [f"{m.upper()} {p}" for p, m in OPERATIONS]


def test_every_lead_endpoint_is_documented_with_its_methods(spec: dict[str, Any]) -> None:
    paths = spec["paths"]

    assert {m for m in paths[LEADS] if m in ("get", "post", "put", "delete", "patch")} == {
        "get",
        "post",
    }
    assert {m for m in paths[ONE] if m in ("get", "post", "put", "delete", "patch")} == {
        "get",
        "put",
        "delete",
    }
    assert spec["openapi"].startswith("3.")


def test_the_bearer_scheme_is_declared_and_required(spec: dict[str, Any]) -> None:
    schemes = spec["components"]["securitySchemes"]
    bearer = [
        name
        for name, s in schemes.items()
        if s.get("type") == "http" and str(s.get("scheme", "")).lower() == "bearer"
    ]
    assert bearer

    for path, method in OPERATIONS:
        requirements = spec["paths"][path][method].get("security", spec.get("security", []))
        assert any(set(r) & set(bearer) for r in requirements), f"{method} {path}"


@pytest.mark.parametrize(("path", "method"), [(LEADS, "post"), (ONE, "put")])
def test_request_bodies_are_documented(spec: dict[str, Any], path: str, method: str) -> None:
    body = spec["paths"][path][method]["requestBody"]

    schema = json_schema_of(spec, body)
    assert set(schema["properties"]) == CLIENT_FIELDS
    if method == "post":
        assert body["required"] is True
        assert {"name", "email"} <= set(schema.get("required", []))
    else:
        assert schema.get("required", []) == []


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=OPERATION_IDS)
def test_error_responses_are_documented(spec: dict[str, Any], path: str, method: str) -> None:
    responses = spec["paths"][path][method]["responses"]

    assert {s for s in responses if s != "200"} == DOCUMENTED_ERRORS[(path, method)]


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=OPERATION_IDS)
def test_every_documented_error_response_is_its_envelope(
    spec: dict[str, Any], path: str, method: str
) -> None:
    responses = spec["paths"][path][method]["responses"]
    documented = {
        status: response["content"]["application/json"]["schema"]["$ref"].rpartition("/")[2]
        for status, response in responses.items()
        if not status.startswith("2")
    }

    assert documented == {
        status: TYPED_ERRORS.get(status, "ErrorEnvelope") for status in documented
    }, f"{method.upper()} {path}"


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=OPERATION_IDS)
def test_success_is_documented_as_200_with_the_envelope(
    spec: dict[str, Any], path: str, method: str
) -> None:
    responses = spec["paths"][path][method]["responses"]

    assert [s for s in responses if s.startswith("2")] == ["200"]
    envelope = json_schema_of(spec, responses["200"])
    assert {"success", "message", "error", "data"} <= set(envelope["properties"])


def test_the_lead_schema_lists_every_field(spec: dict[str, Any]) -> None:
    ok = json_schema_of(spec, spec["paths"][ONE]["get"]["responses"]["200"])
    lead = resolve_ref(spec, ok["properties"]["data"])

    assert set(lead["properties"]) == LEAD_FIELDS


def test_the_error_envelopes_have_code_and_typed_data(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    plain = schemas["ErrorEnvelope"]
    validation = schemas["ValidationErrorEnvelope"]
    exists = schemas["LeadExistsEnvelope"]

    assert set(plain["properties"]) == {"success", "message", "error", "code"}
    assert set(plain["required"]) == {"success", "message", "error", "code"}
    errors = resolve_ref(spec, validation["properties"]["data"])["properties"]["errors"]
    assert set(resolve_ref(spec, errors["items"])["properties"]) == {"field", "message"}
    assert set(resolve_ref(spec, exists["properties"]["data"])["properties"]) == {"lead_id"}


def test_the_list_documents_its_query_parameters(spec: dict[str, Any]) -> None:
    parameters = spec["paths"][LEADS]["get"]["parameters"]

    assert {p["name"] for p in parameters if p["in"] == "query"} == {
        "limit",
        "cursor",
        "email",
        "source",
        "phone",
        "tag",
        "q",
        "any_tag",
        "not_tag",
        "created_after",
        "created_before",
    }


def test_the_count_documents_the_same_filters_without_paging(spec: dict[str, Any]) -> None:
    listing = {p["name"] for p in spec["paths"][LEADS]["get"]["parameters"] if p["in"] == "query"}
    counting = {p["name"] for p in spec["paths"][COUNT]["get"]["parameters"] if p["in"] == "query"}

    assert counting == listing - {"limit", "cursor"}
    assert "field.<key>" in spec["paths"][COUNT]["get"]["description"]


def test_tag_parameters_state_the_tag_rule(spec: dict[str, Any]) -> None:
    parameters = {p["name"]: p for p in spec["paths"][LEADS]["get"]["parameters"]}

    for name in ("tag", "any_tag", "not_tag"):
        schema = parameters[name]["schema"]
        assert schema["type"] == "array"
        assert schema["maxItems"] == 50
        pattern = re.compile(schema["items"]["pattern"])
        assert pattern.search(" March-Cohort ")
        assert pattern.search("city: leeds")
        assert not pattern.search("")
        assert not pattern.search("a" * 65)
        assert not pattern.search("no/slash")
    assert parameters["created_after"]["schema"]["format"] == "date-time"


def test_custom_fields_state_their_rules(spec: dict[str, Any]) -> None:
    new_lead = json_schema_of(spec, spec["paths"][LEADS]["post"]["requestBody"])
    fields = new_lead["properties"]["fields"]

    assert fields["maxProperties"] == 50
    assert fields["propertyNames"]["pattern"] == "^[a-z][a-z0-9_]{0,63}$"
    kinds = {branch["type"] for branch in fields["additionalProperties"]["oneOf"]}
    assert kinds == {"string", "number", "boolean", "null"}
    assert "8 KB" in fields["description"]


async def test_the_schema_page_is_html(api: Api) -> None:
    response = await api.client.get("/schema")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "<html" in response.text.lower()


def test_no_parameter_is_documented_as_null(spec: dict[str, Any]) -> None:
    """A generated client must not accept None for an optional parameter (httpx would
    fail on it): optional parameters are omitted, documented as plain strings."""
    nullable = [
        f"{method.upper()} {path} {parameter['name']}"
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", [])
        if "null" in str(parameter["schema"])
    ]

    assert nullable == []


def test_the_page_size_is_documented_with_its_bounds(spec: dict[str, Any]) -> None:
    [limit] = [p for p in spec["paths"][LEADS]["get"]["parameters"] if p["name"] == "limit"]

    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 100)


async def test_the_cursor_is_documented_by_its_shape_and_next_cursor_has_it(
    api: Api, spec: dict[str, Any]
) -> None:
    [cursor] = [p for p in spec["paths"][LEADS]["get"]["parameters"] if p["name"] == "cursor"]
    for n in range(3):
        await api.add_lead(email=f"page{n}@example.com")

    response = await api.client.get(LEADS, params={"limit": 2}, headers=api.auth)
    issued = response.json()["data"]["next_cursor"]

    assert cursor["schema"]["pattern"] == CURSOR.pattern
    assert re.fullmatch(cursor["schema"]["pattern"], issued)
    assert len(issued) <= cursor["schema"]["maxLength"]


@pytest.mark.parametrize(
    "address",
    [
        "ada@example.com",
        "ada@testing.example.com",
        "ada@school.test",
        "ada@SCHOOL.TEST",
        "ada@printer.local",
        "ada@localhost",
        "ada@hidden.onion",
        "ada@1.0.0.127.in-addr.arpa",
        "ada@nowhere.invalid",
    ],
)
async def test_the_documented_address_pattern_agrees_with_the_server(
    api: Api, spec: dict[str, Any], address: str
) -> None:
    email = spec["components"]["schemas"]["NewLead"]["properties"]["email"]

    response = await api.client.post(
        LEADS, json={"name": "Ada", "email": address}, headers=api.auth
    )

    assert email["format"] == "email"
    documented = re.search(email["pattern"], address) is not None
    assert (response.status_code == 200) == documented, response.text


def test_request_bodies_refuse_unknown_fields_and_an_empty_update(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]

    for name in ("NewLead", "LeadChanges", "SendEmailRequest", "SendTemplateEmailRequest"):
        assert schemas[name]["additionalProperties"] is False, name
    assert schemas["LeadChanges"]["minProperties"] == 1
    assert "minProperties" not in schemas["NewLead"]


async def test_the_document_is_built_once_per_inputs_and_apart_for_others() -> None:
    """Apps made alike share one document (built once per process); a different input,
    here whether a default sender is configured, gets its own, as it must say otherwise."""
    plain = Settings(migrate_on_start=False)
    defaulted = Settings(migrate_on_start=False, email_default_from="Team <team@example.com>")
    documents = []
    for settings in (plain, plain, defaulted):
        async with open_api(settings=settings) as api:
            served = (await api.client.get("/schema/openapi.json")).json()
            documents.append((api.client.app.plugins.get(OpenAPIPlugin).provide_openapi(), served))

    (first, served_first), (second, served_second), (other, served_other) = documents
    assert first is second
    assert served_first == served_second
    assert other is not first
    assert "from" in served_first["components"]["schemas"]["SendEmailRequest"]["required"]
    assert "from" not in served_other["components"]["schemas"]["SendEmailRequest"].get(
        "required", []
    )
