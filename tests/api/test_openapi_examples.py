"""Every body in the OpenAPI document has an example, each example is valid against its own
schema, and each success example says what the server really answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema

from tests.api.support import SENDER, Api
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import (
    ACTIONS,
    CAMPAIGNS,
    EXPORT,
    IMPORTS,
    LEADS,
    MESSAGES,
    PRIVACY_ERASE,
    PRIVACY_EXPORT,
    SEND,
    SUPPRESSIONS,
    TEMPLATE,
    TEMPLATES,
)

HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def bodies(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON body the document describes: (where, its media object)."""
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            where = f"{method.upper()} {path}"
            for media in operation.get("requestBody", {}).get("content", {}).values():
                yield f"{where} request", media
            for status, response in operation["responses"].items():
                for media in response.get("content", {}).values():
                    yield f"{where} {status}", media
    for name, response in spec["components"].get("responses", {}).items():
        for media in response.get("content", {}).values():
            yield f"components.responses.{name}", media


def examples_of(media: dict[str, Any]) -> list[Any]:
    if "example" in media:
        return [media["example"]]
    return [example["value"] for example in media.get("examples", {}).values()]


def test_every_body_has_an_example_valid_against_its_schema(spec: dict[str, Any]) -> None:
    checked = 0
    for where, media in bodies(spec):
        found = examples_of(media)
        assert found, f"{where}: no example"
        # The media's schema, with the document's components beside it for its $refs.
        schema = {**media["schema"], "components": spec["components"]}
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        for example in found:
            errors = [e.message for e in validator.iter_errors(example)]
            assert not errors, f"{where}: {errors}"
            checked += 1
    assert checked > 60  # every operation's success and errors, and the request bodies


def test_each_error_example_is_named_by_its_code_and_the_status_says_it(
    spec: dict[str, Any],
) -> None:
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            operation = item.get(method)
            for status, response in (operation or {}).get("responses", {}).items():
                if status.startswith("2"):
                    continue
                named = response["content"]["application/json"]["examples"]
                assert named, (method, path, status)
                for code, example in named.items():
                    assert example["value"]["code"] == code
                    assert example["value"]["success"] is False
                    assert f"`{code}`" in response["description"], (method, path, status)


def test_method_not_allowed_is_described_with_its_allow_header(spec: dict[str, Any]) -> None:
    response = spec["components"]["responses"]["MethodNotAllowed"]

    assert "Allow" in response["headers"]
    assert response["content"]["application/json"]["example"]["code"] == "METHOD_NOT_ALLOWED"


def success_example(spec: dict[str, Any], path: str, method: str, status: str = "") -> Any:
    """The example of the operation's success (of ``status``, where it has several)."""
    responses = spec["paths"][path][method]["responses"]
    if not status:
        [status] = [status for status in responses if status.startswith("2")]
    [media] = responses[status]["content"].values()
    return media["example"]


def assert_like(real: Any, example: Any, where: str = "") -> None:
    """The same shape: the same keys at every level (ids, times and texts aside)."""
    if isinstance(example, dict):
        assert isinstance(real, dict), where
        assert set(real) == set(example), where
        for key in example:
            assert_like(real[key], example[key], f"{where}.{key}")
    elif isinstance(example, list) and example and real:
        assert isinstance(real, list), where
        assert_like(real[0], example[0], f"{where}[0]")


# The layout the template example names (one of the school's own).
LETTERHEAD = {
    "id": "letterhead",
    "kind": "layout",
    "name": "Acme Academy letterhead",
    "subject": "Acme Academy",
    "html": '<div class="page"><h1>Acme Academy</h1>{{content}}<p class="small">12 High St,'
    ' Leeds. <a href="{{unsubscribe_url}}">Unsubscribe</a></p></div>',
}


def example_of(spec: dict[str, Any], path: str) -> Any:
    """The request body example of POST ``path``."""
    return spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"]


async def call(api: Api, method: str, path: str, status: int = 200, **kwargs: Any) -> Any:
    response = await api.client.request(method, path, headers=api.auth, **kwargs)
    assert response.status_code == status, response.text
    if response.headers["content-type"].startswith("text/csv"):
        return response.text
    return response.json()


async def test_success_examples_are_what_the_server_answers(api: Api, spec: dict[str, Any]) -> None:
    lead = spec["paths"][LEADS]["post"]["requestBody"]["content"]["application/json"]["example"]
    one = LEADS + "/{lead_id}"
    change = spec["paths"][one]["put"]["requestBody"]["content"]["application/json"]["example"]
    send_body = spec["paths"][SEND]["post"]["requestBody"]["content"]["application/json"]
    send = {**send_body["example"], "from": SENDER}
    template_send = {
        "to": ["ada@example.com", "grace@example.com"],
        "template_id": "welcome",
        "variables": WELCOME_VARIABLES,
        "from": SENDER,
    }

    added = await call(api, "POST", LEADS, json=lead)
    lead_id = added["data"]["lead_id"]
    sent = await call(api, "POST", SEND, json=send)
    answers = {
        (LEADS, "post"): added,
        (LEADS, "get"): await call(api, "GET", LEADS, params={"limit": 1}),
        (LEADS + "/count", "get"): await call(api, "GET", LEADS + "/count"),
        (one + "/tags", "post"): await call(
            api, "POST", f"{LEADS}/{lead_id}/tags", json={"add": ["vip"]}
        ),
        (one, "get"): await call(api, "GET", f"{LEADS}/{lead_id}"),
        (one + "/timeline", "get"): await call(api, "GET", f"{LEADS}/{lead_id}/timeline"),
        (one, "put"): await call(api, "PUT", f"{LEADS}/{lead_id}", json=change),
        (SEND, "post"): sent,
        (TEMPLATE, "post"): await call(api, "POST", TEMPLATE, json=template_send),
        (MESSAGES + "/{message_id}", "get"): await call(
            api, "GET", f"{MESSAGES}/{sent['data']['id']}"
        ),
        (MESSAGES, "get"): await call(api, "GET", MESSAGES, params={"limit": 1}),
        (TEMPLATES, "get"): await call(api, "GET", TEMPLATES),
        (TEMPLATE, "get"): await call(api, "GET", TEMPLATE),
        (one, "delete"): await call(api, "DELETE", f"{LEADS}/{lead_id}"),
    }
    # The import's example file holds the lead above: imported once it is deleted.
    imports = spec["paths"][IMPORTS]["post"]["requestBody"]["content"]
    file = imports["multipart/form-data"]["example"]["file"]
    imported = await call(
        api, "POST", IMPORTS, 202, files={"file": ("leads.csv", file.encode(), "text/csv")}
    )
    import_id = imported["data"]["id"]
    await api.finished_import(import_id)
    answers |= {
        (IMPORTS, "post"): imported,
        (IMPORTS + "/{import_id}", "get"): await call(api, "GET", f"{IMPORTS}/{import_id}"),
        (IMPORTS, "get"): await call(api, "GET", IMPORTS, params={"limit": 1}),
        (IMPORTS + "/{import_id}/errors", "get"): await call(
            api, "GET", f"{IMPORTS}/{import_id}/errors"
        ),
        (EXPORT, "get"): await call(api, "GET", EXPORT),
    }
    # The bulk action's example, run; and as a dry run (its second success, 200).
    action_body = example_of(spec, ACTIONS)
    action = await call(api, "POST", ACTIONS, 202, json=action_body)
    action_id = action["data"]["id"]
    counted = await call(api, "POST", ACTIONS, 200, json={**action_body, "dry_run": True})
    dry = success_example(spec, ACTIONS, "post", "200")
    assert counted["message"] == dry["message"] == "Dry run: nothing done"
    assert_like(counted, dry, "post 200 " + ACTIONS)
    answers |= {
        (ACTIONS, "post"): action,
        (ACTIONS + "/{action_id}", "get"): await call(api, "GET", f"{ACTIONS}/{action_id}"),
    }
    # The campaign's example audience holds the imported lead.
    body = spec["paths"][CAMPAIGNS]["post"]["requestBody"]["content"]["application/json"]
    campaign = {**body["example"], "from": SENDER}
    created = await call(api, "POST", CAMPAIGNS, 201, json=campaign)
    one_campaign = CAMPAIGNS + "/{campaign_id}"
    at = f"{CAMPAIGNS}/{created['data']['id']}"
    draft = await call(api, "POST", CAMPAIGNS, 201, json={**campaign, "draft": True})
    answers |= {
        (CAMPAIGNS, "post"): created,
        (CAMPAIGNS, "get"): await call(api, "GET", CAMPAIGNS, params={"limit": 1}),
        (one_campaign, "get"): await call(api, "GET", at),
        (one_campaign + "/recipients", "get"): await call(api, "GET", f"{at}/recipients"),
        (one_campaign + "/pause", "post"): await call(api, "POST", f"{at}/pause"),
        (one_campaign + "/resume", "post"): await call(api, "POST", f"{at}/resume"),
        (one_campaign + "/cancel", "post"): await call(api, "POST", f"{at}/cancel"),
        (one_campaign + "/start", "post"): await call(
            api, "POST", f"{CAMPAIGNS}/{draft['data']['id']}/start"
        ),
    }
    # Another draft, changed as the example asks, then deleted.
    second = await call(api, "POST", CAMPAIGNS, 201, json={**campaign, "draft": True})
    there = f"{CAMPAIGNS}/{second['data']['id']}"
    put = spec["paths"][one_campaign]["put"]["requestBody"]["content"]["application/json"]
    answers |= {
        (one_campaign, "put"): await call(api, "PUT", there, json=put["example"]),
        (one_campaign, "delete"): await call(api, "DELETE", there),
    }
    # The person of the suppression and erasure examples: a lead, a message, the entry.
    body = spec["paths"][SUPPRESSIONS]["post"]["requestBody"]["content"]["application/json"]
    person = body["example"]["email"]
    await call(api, "POST", LEADS, json={**lead, "email": person})
    await call(api, "POST", SEND, json={**send, "to": person})
    entry = await call(api, "POST", SUPPRESSIONS, 201, json=body["example"])
    again = await call(api, "POST", SUPPRESSIONS, 200, json=body["example"])
    already = success_example(spec, SUPPRESSIONS, "post", "200")
    assert again["message"] == already["message"] == "Already suppressed"
    assert_like(again, already, "post 200 " + SUPPRESSIONS)
    answers |= {
        (SUPPRESSIONS, "post"): entry,
        (SUPPRESSIONS, "get"): await call(api, "GET", SUPPRESSIONS),
        (PRIVACY_EXPORT, "get"): await call(api, "GET", PRIVACY_EXPORT, params={"email": person}),
    }
    erasure = spec["paths"][PRIVACY_ERASE]["post"]["requestBody"]["content"]["application/json"]
    assert erasure["example"]["email"] == person
    answers |= {
        (PRIVACY_ERASE, "post"): await call(api, "POST", PRIVACY_ERASE, json=erasure["example"]),
        (SUPPRESSIONS + "/{email}", "delete"): await call(
            api, "DELETE", f"{SUPPRESSIONS}/{person}"
        ),
    }
    # A school's own template, in its layout (the example names one), changed, then deleted.
    await call(api, "POST", TEMPLATES, 201, json=LETTERHEAD)
    written = spec["paths"][TEMPLATES]["post"]["requestBody"]["content"]["application/json"]
    own = TEMPLATES + "/{template_id}"
    mine = f"{TEMPLATES}/{written['example']['id']}"
    edit = spec["paths"][own]["put"]["requestBody"]["content"]["application/json"]["example"]
    answers |= {
        (TEMPLATES, "post"): await call(api, "POST", TEMPLATES, 201, json=written["example"]),
        (own, "put"): await call(api, "PUT", mine, json=edit),
        (own, "get"): await call(api, "GET", mine),
        (own + "/versions", "get"): await call(api, "GET", f"{mine}/versions", params={"limit": 1}),
        (own + "/versions/{version}", "get"): await call(api, "GET", f"{mine}/versions/2"),
        (own + "/preview", "post"): await call(
            api, "POST", f"{mine}/preview", json=example_of(spec, own + "/preview")
        ),
        (own + "/test", "post"): await call(
            api, "POST", f"{mine}/test", json={**example_of(spec, own + "/test"), "from": SENDER}
        ),
        (own, "delete"): await call(api, "DELETE", mine),
    }
    documented = {
        (path, method)
        for path, item in spec["paths"].items()
        for method in HTTP_METHODS
        if method in item
    }
    assert set(answers) == documented  # every operation's success compared

    for (path, method), real in answers.items():
        created = "201" if (path, method) == (SUPPRESSIONS, "post") else ""  # it has a 200
        created = "201" if (path, method) == (TEMPLATES, "post") else created
        created = "202" if (path, method) == (ACTIONS, "post") else created
        example = success_example(spec, path, method, created)
        if isinstance(example, str):  # a CSV file: the same first columns
            assert real.startswith("email,name,source,note,phone,tags"), (method, path)
            assert example.startswith("email,name,source,note,phone,tags"), (method, path)
            continue
        assert real["message"] == example["message"], (method, path)
        assert_like(real, example, f"{method} {path}")
