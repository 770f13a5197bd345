"""The document says exactly what the server does, where it once did not (issue 24): a
blank ``from`` (the default sender), an import's file (required, with a header row that has
an ``email`` column, in content types a generated client can send), and the ids in answers
(each with its kind's pattern). schemathesis checks all of it over generated requests
(tests/api/test_schemathesis.py, tests/e2e/test_schemathesis_postgres.py); these name each
rule, and hold the import's pattern to the server's header reader over many files."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadmail.adapters.http.tracing import REQUEST_ID
from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.email import MESSAGE_ID
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_actions import ACTION_ID
from leadmail.domain.lead_imports import IMPORT_ID
from leadmail.domain.leads import LEAD_ID
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.services.import_reading import header_bytes
from tests.api.campaign_support import campaign_body
from tests.api.support import Api, email_settings, open_api, plain_email, welcome_email
from tests.support.envelope import ACTIONS, CAMPAIGNS, IMPORTS, SEND, TEMPLATE

DEFAULT_SENDER = "School <school@example.com>"
SCHEMA = "/schema/openapi.json"
BLANKS = ["", " ", "\t \u3000"]


# --- ids in answers --------------------------------------------------------------------

# Every id the answers carry, by (schema, property): the domain's rule for its kind.
ANSWER_IDS = {
    ("Lead", "lead_id"): LEAD_ID,
    ("DeletedLead", "lead_id"): LEAD_ID,
    ("LeadTimeline", "lead_id"): LEAD_ID,
    ("ExistingLead", "lead_id"): LEAD_ID,
    ("CampaignRecipient", "lead_id"): LEAD_ID,
    ("Message", "id"): MESSAGE_ID,
    ("CampaignRecipient", "message_id"): MESSAGE_ID,
    ("Suppression", "message_id"): MESSAGE_ID,
    ("Suppression", "campaign_id"): CAMPAIGN_ID,
    ("ImportOut", "id"): IMPORT_ID,
    ("LeadAction", "id"): ACTION_ID,
    ("Campaign", "id"): CAMPAIGN_ID,
    ("DeletedCampaign", "id"): CAMPAIGN_ID,
    ("Template", "id"): TEMPLATE_ID,
    ("Template", "layout_id"): TEMPLATE_ID,
    ("DeletedTemplate", "id"): TEMPLATE_ID,
    ("TemplatePreview", "id"): TEMPLATE_ID,
    # Leads a request names (a preview's, a test send's): the pattern of a lead's id.
    ("TemplatePreviewRequest", "lead_id"): LEAD_ID,
    ("TemplateTestRequest", "lead_id"): LEAD_ID,
    ("Message", "template_id"): TEMPLATE_ID,
    ("Message", "campaign_id"): CAMPAIGN_ID,
    ("Campaign", "template_id"): TEMPLATE_ID,
    ("Campaign", "layout_id"): TEMPLATE_ID,
    ("RequestId", "request_id"): REQUEST_ID,
    ("PersonalDataRecipient", "campaign_id"): CAMPAIGN_ID,
    ("PersonalDataImportRow", "import_id"): IMPORT_ID,
}
# Ids a client sends in a body: a template's.
REQUEST_IDS = {
    ("SendTemplateEmailRequest", "template_id"),
    ("NewCampaign", "template_id"),
    ("CampaignChange", "template_id"),
    ("TemplateInput", "id"),
    ("TemplateInput", "layout_id"),
    ("TemplateChange", "layout_id"),
}
# Ids the service does not make: the provider's own.
NOT_OURS = {"provider_message_id"}


async def test_every_id_in_an_answer_states_its_kind_s_pattern_and_matches_it(api: Api) -> None:
    spec = (await api.client.get(SCHEMA)).json()
    schemas: dict[str, Any] = spec["components"]["schemas"]
    ids = {
        (name, prop): schema
        for name, component in schemas.items()
        for prop, schema in component.get("properties", {}).items()
        if (prop == "id" or prop.endswith("_id")) and prop not in NOT_OURS
    }
    lead = await api.add_lead()
    sent = await api.client.post(SEND, json=plain_email(), headers=api.auth)
    imported = await api.client.post(
        IMPORTS, content=b"email\nb@example.com\n", headers={**api.auth, "Content-Type": "text/csv"}
    )
    campaign = await api.client.post(CAMPAIGNS, json=campaign_body(audience={}), headers=api.auth)
    action = await api.client.post(
        ACTIONS, json={"action": "delete", "filter": {"tag": "none"}}, headers=api.auth
    )

    assert set(ids) - REQUEST_IDS == set(ANSWER_IDS)
    for key, rule in ANSWER_IDS.items():
        assert ids[key].get("pattern") == rule.pattern, key
    for key in REQUEST_IDS:
        assert ids[key].get("pattern") == TEMPLATE_ID.pattern, key
    assert LEAD_ID.fullmatch(lead["lead_id"])
    assert MESSAGE_ID.fullmatch(sent.json()["data"]["id"]), sent.text
    assert IMPORT_ID.fullmatch(imported.json()["data"]["id"]), imported.text
    assert CAMPAIGN_ID.fullmatch(campaign.json()["data"]["id"]), campaign.text
    assert ACTION_ID.fullmatch(action.json()["data"]["id"]), action.text


# --- a blank `from` -------------------------------------------------------------------


def sender_schema(spec: dict[str, Any], component: str) -> jsonschema.Draft202012Validator:
    schema = spec["components"]["schemas"][component]["properties"]["from"]
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


Body = Callable[[str], dict[str, Any]]
BODIES: dict[str, tuple[str, int, Body]] = {
    "SendEmailRequest": (SEND, 200, lambda sender: plain_email(**{"from": sender})),
    "SendTemplateEmailRequest": (TEMPLATE, 200, lambda sender: welcome_email(**{"from": sender})),
    "NewCampaign": (CAMPAIGNS, 201, lambda sender: campaign_body(audience={}, **{"from": sender})),
}


@pytest.mark.parametrize("component", sorted(BODIES))
@pytest.mark.parametrize("default", [DEFAULT_SENDER, ""], ids=["default sender", "none"])
async def test_a_blank_from_is_documented_as_the_server_takes_it(
    component: str, default: str
) -> None:
    """With a default sender, a blank (or null) ``from`` is that sender, in the document as
    on the server; without one, both refuse it."""
    path, ok, body = BODIES[component]
    async with open_api(settings=email_settings(email_default_from=default)) as api:
        await api.add_lead()  # an audience for the campaign
        spec = (await api.client.get(SCHEMA)).json()
        documented = sender_schema(spec, component)

        for blank in BLANKS:
            response = await api.client.post(path, json=body(blank), headers=api.auth)
            assert documented.is_valid(blank) == bool(default), repr(blank)
            if not default:
                assert response.status_code == 422, response.text
                assert response.json()["data"]["errors"][0]["field"] == "from"
                continue
            assert response.status_code == ok, response.text
            data = response.json()["data"]
            [sent] = data.get("messages", [data])
            assert sent["from"] == '"School" <school@example.com>'
        assert documented.is_valid(None) == bool(default)
        for refused in ("school", "\x00"):
            response = await api.client.post(path, json=body(refused), headers=api.auth)
            assert not documented.is_valid(refused)
            assert response.status_code == 422, response.text


# --- an import's file -----------------------------------------------------------------


def import_body(spec: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = spec["paths"][IMPORTS]["post"]["requestBody"]
    return body


def file_schema(spec: dict[str, Any]) -> dict[str, Any]:
    file: dict[str, Any] = import_body(spec)["content"]["multipart/form-data"]["schema"]
    return file


def test_the_import_file_is_required_and_sent_as_a_generated_client_can(
    spec: dict[str, Any],
) -> None:
    body = import_body(spec)
    form = file_schema(spec)
    file = form["properties"]["file"]

    assert body["required"] is True
    # Only what openapi-python-client takes: text/csv, though served, is said in words.
    assert list(body["content"]) == ["multipart/form-data"]
    assert "text/csv" in spec["paths"][IMPORTS]["post"]["description"]
    assert form["required"] == ["file"]
    assert (file["type"], file["minLength"], file["contentMediaType"]) == ("string", 1, "text/csv")
    assert "pattern" in file


def file_pattern(spec: dict[str, Any]) -> re.Pattern[str]:
    return re.compile(file_schema(spec)["properties"]["file"]["pattern"])


@pytest.mark.parametrize(
    ("text", "documented"),
    [
        ("email", True),
        ("\ufeffemail\r\nada@example.com\r\n", True),
        ("name;email;city\nAda;ada@example.com;Leeds\n", True),
        (" email ,, course_of_interest\rada@example.com,,x", True),
        ("email,name,phone,tags,course_of_interest,city\r\n", True),
        ("", False),  # empty
        ("\r\nemail\r\n", False),  # a blank header row
        ("name\nAda\n", False),  # no email column
        ("email,name,email\n", False),  # a column twice
        ("email;name,city\n", False),  # two delimiters
        ("email,2nd\n", False),  # no custom field key
    ],
)
async def test_the_file_pattern_agrees_with_the_server(
    api: Api, spec: dict[str, Any], text: str, documented: bool
) -> None:
    """As the form's part, and as the body (the curl way, said in words)."""
    as_part = await api.client.post(
        IMPORTS, files={"file": ("leads.csv", text.encode(), "text/csv")}, headers=api.auth
    )
    as_body = await api.client.post(
        IMPORTS, content=text.encode(), headers={**api.auth, "Content-Type": "text/csv"}
    )

    assert (file_pattern(spec).search(text) is not None) == documented
    assert as_part.status_code == (202 if documented else 422), as_part.text
    assert as_body.status_code == as_part.status_code, as_body.text


def test_every_file_the_pattern_takes_the_server_takes(spec: dict[str, Any]) -> None:
    """Over many files drawn from the document's pattern: the header reader that decides
    the import's 202 or 422 (services/import_reading.py) takes each one."""
    pattern = file_pattern(spec)

    async def header_of(data: bytes) -> bytes:
        async def body() -> AsyncIterator[bytes]:
            yield data

        return await header_bytes(body())

    @settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
    @given(st.from_regex(pattern, fullmatch=True))
    def taken(text: str) -> None:
        try:
            asyncio.run(header_of(text.encode()))
        except ValidationFailed as e:
            raise AssertionError(f"{text!r}: {e.message}") from e

    taken()
