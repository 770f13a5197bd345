"""The error table is the one list of failures: the README's table of codes says the same."""

from __future__ import annotations

import re
from pathlib import Path

from leadmail.adapters.http.envelopes import LeadExistsEnvelope, ValidationErrorEnvelope
from leadmail.adapters.http.error_table import ALL, BY_CLASS, with_status
from leadmail.adapters.http.operation_errors import describe, error_responses
from leadmail.domain.errors import LeadNotFound, ValidationFailed
from leadmail.ports.errors import DuplicateLead

README = Path(__file__).resolve().parents[2] / "README.md"
_ROW = re.compile(r"^\| (\d{3}) \| `([A-Z_]+)` \|", re.MULTILINE)


def test_the_readme_lists_every_code_with_its_status_and_no_other() -> None:
    documented = set(_ROW.findall(README.read_text()))

    assert documented == {(str(kind.status), kind.code) for kind in ALL}


def test_each_code_is_one_kind() -> None:
    codes = [kind.code for kind in ALL]

    assert len(codes) == len(set(codes))


def test_a_class_answers_with_its_own_code() -> None:
    for cls, kind in BY_CLASS.items():
        assert kind.code == cls.code


def test_the_document_describes_a_status_by_all_its_codes() -> None:
    for kind in ALL:
        assert f"`{kind.code}`: {kind.when}" in describe(with_status(kind.status))
    assert [k.code for k in with_status(404)] == [
        "ACTION_NOT_FOUND",
        "CAMPAIGN_NOT_FOUND",
        "IMPORT_NOT_FOUND",
        "LEAD_NOT_FOUND",
        "MESSAGE_NOT_FOUND",
        "NOT_FOUND",
        "SUPPRESSION_NOT_FOUND",
        "TEMPLATE_NOT_FOUND",
    ]


def test_an_operation_documents_its_own_errors_only() -> None:
    get_lead = error_responses(LeadNotFound)
    add_lead = error_responses(ValidationFailed, DuplicateLead, body=True)

    # 422 on every operation: a query parameter it does not take, an id of the wrong shape.
    assert sorted(get_lead) == [401, 404, 422, 429, 431, 500, 503]
    assert "`LEAD_NOT_FOUND`" in get_lead[404].description
    assert "`NOT_FOUND`" not in get_lead[404].description  # no such endpoint: not this one
    assert sorted(add_lead) == [400, 401, 409, 413, 422, 429, 431, 500, 503]
    assert "IDEMPOTENCY" not in add_lead[409].description
    assert add_lead[409].data_container is LeadExistsEnvelope
    assert add_lead[422].data_container is ValidationErrorEnvelope
