"""`list_unsubscribe` on the send endpoints: each message's RFC 8058 headers, the plain
send's one-recipient rule (422 naming the flag), and the document stating it."""

from __future__ import annotations

from typing import Any

import jsonschema

from leadmail.domain.unsubscribe import UnsubscribeTarget
from tests.api.support import Api, json_schema_of, plain_email, recorder, welcome_email
from tests.support.envelope import SEND, TEMPLATE, assert_invalid, assert_ok


async def target_of(api: Api, headers: tuple[tuple[str, str], ...]) -> UnsubscribeTarget:
    found = dict(headers)
    assert found["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = found["List-Unsubscribe"]
    assert link.startswith("<http://127.0.0.1:8000/u/"), link  # where `serve` would listen
    return await api.services.unsubscribes.target(link[1:-1].rpartition("/")[2])


async def test_a_plain_send_with_the_flag_carries_its_recipients_headers(api: Api) -> None:
    body = plain_email(to=["Ada <ada@example.com>"], list_unsubscribe=True)

    assert_ok(await api.client.post(SEND, json=body, headers=api.auth))
    assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))

    flagged, unflagged = recorder(api).delivered
    assert await target_of(api, flagged.email.headers) == UnsubscribeTarget(
        api.account_id, "ada@example.com"
    )
    assert unflagged.email.headers == ()


async def test_a_plain_send_with_the_flag_and_several_recipients_is_422(api: Api) -> None:
    body = plain_email(to=["ada@example.com", "grace@example.com"], list_unsubscribe=True)

    response = await api.client.post(SEND, json=body, headers=api.auth)

    assert_invalid(response, "list_unsubscribe")
    assert recorder(api).delivered == []


async def test_a_template_send_with_the_flag_gives_each_recipient_theirs(api: Api) -> None:
    body = welcome_email(to=["ada@example.com", "grace@example.com"], list_unsubscribe=True)

    assert_ok(await api.client.post(TEMPLATE, json=body, headers=api.auth))

    targets = [await target_of(api, d.email.headers) for d in recorder(api).delivered]
    assert sorted(t.address for t in targets) == ["ada@example.com", "grace@example.com"]
    assert {t.account_id for t in targets} == {api.account_id}


async def test_the_document_states_the_one_recipient_rule(spec: dict[str, Any]) -> None:
    schema = json_schema_of(spec, spec["paths"]["/api/v1/email/send"]["post"]["requestBody"])
    # Its `if` and `then` as written (the rest of the body's schema is held to the server
    # by schemathesis).
    check = jsonschema.Draft202012Validator({"if": schema["if"], "then": schema["then"]})

    one = plain_email(to=["ada@example.com"], list_unsubscribe=True)
    several = plain_email(to=["ada@example.com", "grace@example.com"], list_unsubscribe=True)
    assert check.is_valid(one)
    assert check.is_valid(plain_email(to="ada@example.com", list_unsubscribe=True))
    assert check.is_valid({**several, "list_unsubscribe": False})
    assert not check.is_valid(several)
