"""GET /api/v1/email/templates (and its alias /template): the packaged catalog, each
template with the variables its subject and body use."""

from __future__ import annotations

import pytest

from tests.api.support import Api
from tests.support.catalog import PACKAGED_TEMPLATE_IDS, PLACEHOLDER
from tests.support.envelope import (
    ISO_UTC,
    TEMPLATE,
    TEMPLATE_FIELDS,
    TEMPLATES,
    assert_error,
    assert_ok,
)


def _first_uses(*texts: str) -> list[str]:
    names: list[str] = []
    for text in texts:
        for name in PLACEHOLDER.findall(text):
            if name not in names:
                names.append(name)
    return names


@pytest.mark.parametrize("path", [TEMPLATES, TEMPLATE])
async def test_the_list_is_the_envelope_of_every_packaged_template(api: Api, path: str) -> None:
    body = assert_ok(await api.client.get(path, headers=api.auth))

    assert "templates" in body["message"].lower()
    assert "retrieved" in body["message"].lower()
    templates = body["data"]
    assert isinstance(templates, list)
    assert {t["id"] for t in templates} == PACKAGED_TEMPLATE_IDS
    assert len(templates) == len(PACKAGED_TEMPLATE_IDS)
    for template in templates:
        assert set(template) == TEMPLATE_FIELDS
        for text in ("id", "name", "subject", "body"):
            assert isinstance(template[text], str)
            assert template[text].strip(), f"{template['id']}: empty {text}"
        assert ISO_UTC.match(template["created_at"]), template["created_at"]


async def test_both_paths_answer_the_same(api: Api) -> None:
    plural = await api.client.get(TEMPLATES, headers=api.auth)
    singular = await api.client.get(TEMPLATE, headers=api.auth)

    assert_ok(plural)
    assert_ok(singular)
    assert plural.json() == singular.json()


async def test_variables_are_the_placeholders_unique_in_order_of_first_use(api: Api) -> None:
    templates = assert_ok(await api.client.get(TEMPLATES, headers=api.auth))["data"]

    for template in templates:
        assert template["variables"] == _first_uses(template["subject"], template["body"]), (
            template["id"]
        )
        assert len(set(template["variables"])) == len(template["variables"])
    welcome = next(t for t in templates if t["id"] == "welcome")
    # The subject's variables come first, then those first used in the body.
    assert welcome["subject"] == "Welcome to {{school_name}}, {{first_name}}"
    assert welcome["variables"] == ["school_name", "first_name", "courses_link", "contact_email"]
    payment = next(t for t in templates if t["id"] == "payment-reminder")
    assert payment["variables"][:3] == ["amount_due", "course_name", "due_date"]


@pytest.mark.parametrize("path", [TEMPLATES, TEMPLATE])
async def test_the_list_needs_a_key(api: Api, path: str) -> None:
    missing = await api.client.get(path)
    wrong = await api.client.get(path, headers={"Authorization": "Bearer lm_not_a_real_key"})

    assert_error(missing, 401, "UNAUTHORIZED")
    assert_error(wrong, 401, "UNAUTHORIZED")
    for response in (missing, wrong):
        assert "{{" not in response.text  # no template leaks into the refusal
