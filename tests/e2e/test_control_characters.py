"""NUL and the other C0 control characters in path ids, query values and one-line fields
are 422 naming what holds them, on both databases (Postgres cannot store a NUL: never a
500); tab, CR and LF stay allowed where text may span lines (a lead's note, html)."""

from __future__ import annotations

import pytest

from tests.e2e.keys import IssuedKey
from tests.e2e.names import new_email
from tests.e2e.server import LeadmailServer
from tests.support.envelope import (
    ACTIONS,
    CAMPAIGNS,
    IMPORTS,
    LEADS,
    MESSAGES,
    SEND,
    SUPPRESSIONS,
    TEMPLATES,
    assert_error,
    assert_invalid,
    ok_data,
)

CONTROLS = ["\x00", "\x01", "\x1f"]
PATHS = [
    f"{LEADS}/ld_{{c}}x",
    f"{LEADS}/{{c}}",
    f"{LEADS}/ld_{{c}}x/timeline",
    f"{MESSAGES}/msg_{{c}}x",
    f"{CAMPAIGNS}/cmp_{{c}}x",
    f"{CAMPAIGNS}/cmp_{{c}}x/recipients",
    f"{IMPORTS}/imp_{{c}}x",
    f"{ACTIONS}/act_{{c}}x",
    f"{TEMPLATES}/x{{c}}",
    f"{TEMPLATES}/x{{c}}/versions",
]
QUERIES = [
    (LEADS, "q"), (LEADS, "tag"), (LEADS, "source"), (LEADS, "field.city"), (LEADS, "email"),
    (LEADS, "cursor"), (f"{LEADS}/count", "q"), (MESSAGES, "to"), (MESSAGES, "template_id"),
    (MESSAGES, "campaign_id"), (MESSAGES, "cursor"), (SUPPRESSIONS, "cursor"),
]  # fmt: skip
ONE_LINE_LEAD_FIELDS = ["name", "source", "phone"]


def percent(c: str) -> str:
    return f"%{ord(c):02X}"


@pytest.mark.parametrize("c", CONTROLS, ids=repr)
def test_control_characters_in_path_ids_are_422(
    server: LeadmailServer, primary_key: IssuedKey, c: str
) -> None:
    with server.client(primary_key.secret) as api:
        for template in PATHS:
            answer = api.get(template.format(c=percent(c)))
            assert answer.status_code == 422, (template, answer.text)
            assert_error(answer, 422, "VALIDATION_FAILED")
        deleted = api.delete(f"{SUPPRESSIONS}/ada{percent(c)}@example.com")
        assert_error(deleted, 422, "VALIDATION_FAILED")


@pytest.mark.parametrize("c", CONTROLS, ids=repr)
def test_control_characters_in_query_values_are_422_naming_them(
    server: LeadmailServer, primary_key: IssuedKey, c: str
) -> None:
    with server.client(primary_key.secret) as api:
        for path, name in QUERIES:
            answer = api.get(path, params={name: f"a{c}b"})
            assert answer.status_code == 422, (path, name, answer.text)
            assert_invalid(answer, name)


@pytest.mark.parametrize("c", CONTROLS, ids=repr)
def test_control_characters_in_one_line_fields_are_422_and_nothing_is_stored(
    server: LeadmailServer, primary_key: IssuedKey, c: str
) -> None:
    with server.client(primary_key.secret) as api:
        for field in ONE_LINE_LEAD_FIELDS:
            email = new_email("ctl")
            answer = api.post(LEADS, json={"name": "Ada", "email": email, field: f"a{c}b"})
            assert_invalid(answer, field)
            assert ok_data(api.get(LEADS, params={"email": email}))["items"] == []
        sent = api.post(
            SEND,
            json={"to": "ada@example.com", "from": "school@example.com",
                  "subject": f"Hi{c}there", "html": "<p>Hi</p>"},
        )  # fmt: skip
        assert_invalid(sent, "subject")
        campaign = api.post(
            CAMPAIGNS, json={"name": f"Spring{c}", "template_id": "welcome", "audience": {}}
        )
        assert_invalid(campaign, "name")
        template = api.post(
            TEMPLATES, json={"name": f"Open{c}day", "subject": "Hi", "html": "<p>Hi</p>"}
        )
        assert_invalid(template, "name")
        suppressed = api.post(SUPPRESSIONS, json={"email": f"ada{c}@example.com"})
        assert_invalid(suppressed, "email")


def test_tab_cr_and_lf_stay_allowed_in_a_note_and_html(
    server: LeadmailServer, primary_key: IssuedKey
) -> None:
    note = "Called:\tyes\r\nAgain on Monday\n"
    with server.client(primary_key.secret) as api:
        lead = ok_data(api.post(LEADS, json={"name": "Ada", "email": new_email("n"), "note": note}))
        sent = api.post(
            SEND,
            json={"to": "ada@example.com", "from": "school@example.com", "subject": "Hi",
                  "html": "<p>\tOne\r\nTwo\n</p>"},
        )  # fmt: skip

    assert lead["note"] == note
    assert sent.status_code == 200, sent.text
