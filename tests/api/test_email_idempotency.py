"""Idempotency-Key on the send endpoints: per account, the same key and body act once and
replay the first answer; another body under the same key is a conflict."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from litestar import Litestar

from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.domain.email import OutgoingEmail
from tests.api.support import (
    Api,
    account_auth,
    memory_with,
    open_api,
    plain_email,
    recorder,
    welcome_email,
)
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import (
    SEND,
    SEND_TEMPLATE,
    TEMPLATE,
    assert_error,
    assert_invalid,
    assert_ok,
)

REPLAYED = "Idempotent-Replayed"


def keyed(api: Api, key: str) -> dict[str, str]:
    return {**api.auth, "Idempotency-Key": key}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (SEND, plain_email()),
        (TEMPLATE, welcome_email(to=["ada@example.com", "grace@example.com"])),
    ],
    ids=["send", "template"],
)
async def test_the_same_key_and_body_replay_the_first_answer_without_sending(
    api: Api, path: str, body: dict[str, Any]
) -> None:
    first = await api.client.post(path, json=body, headers=keyed(api, "order-42"))
    delivered = len(recorder(api).delivered)

    again = await api.client.post(path, json=body, headers=keyed(api, "order-42"))

    assert_ok(first)
    assert REPLAYED not in first.headers
    assert_ok(again)
    assert again.headers.get(REPLAYED) == "true"
    assert again.json() == first.json()
    assert len(recorder(api).delivered) == delivered
    assert recorder(api).attempts == delivered


async def test_without_a_key_the_same_body_sends_twice(api: Api) -> None:
    first = assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))
    second = assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))

    assert first["data"]["id"] != second["data"]["id"]
    assert len(recorder(api).delivered) == 2


async def test_the_alias_path_is_the_same_operation(api: Api) -> None:
    body = welcome_email()

    first = await api.client.post(TEMPLATE, json=body, headers=keyed(api, "alias"))
    again = await api.client.post(SEND_TEMPLATE, json=body, headers=keyed(api, "alias"))

    assert_ok(first)
    assert again.headers.get(REPLAYED) == "true"
    assert again.json() == first.json()
    assert len(recorder(api).delivered) == 1


FOLLOW_UP_VARIABLES = {
    "course_name": "Pottery",
    "start_date": "1 March",
    "school_name": "Northwind Academy",
    "first_name": "Ada",
    "course_link": "https://example.com/pottery",
    "contact_email": "hello@example.com",
}


@pytest.mark.parametrize(
    ("path", "body", "changed"),
    [
        (SEND, plain_email(), plain_email(subject="Another subject")),
        (SEND, plain_email(), plain_email(to=["ada@example.com", "grace@example.com"])),
        (SEND, plain_email(), plain_email(html="<p>Another body</p>")),
        (
            TEMPLATE,
            welcome_email(),
            welcome_email(template_id="lead-follow-up", variables=FOLLOW_UP_VARIABLES),
        ),
        (
            TEMPLATE,
            welcome_email(),
            welcome_email(variables={**WELCOME_VARIABLES, "first_name": "Grace"}),
        ),
    ],
    ids=["subject", "to", "html", "template_id", "variables"],
)
async def test_the_same_key_with_another_body_is_a_conflict(
    api: Api, path: str, body: dict[str, Any], changed: dict[str, Any]
) -> None:
    first = await api.client.post(path, json=body, headers=keyed(api, "reused"))
    delivered = len(recorder(api).delivered)

    conflict = await api.client.post(path, json=changed, headers=keyed(api, "reused"))

    assert_ok(first)
    assert_error(conflict, 409, "IDEMPOTENCY_KEY_REUSED")
    assert REPLAYED not in conflict.headers
    assert len(recorder(api).delivered) == delivered


async def test_an_unused_extra_variable_does_not_change_the_request(api: Api) -> None:
    """Extra variables are ignored, so they are not part of what the key stands for."""
    body = welcome_email()
    extra = welcome_email(variables={**WELCOME_VARIABLES, "unused": "x"})

    first = await api.client.post(TEMPLATE, json=body, headers=keyed(api, "extra"))
    again = await api.client.post(TEMPLATE, json=extra, headers=keyed(api, "extra"))

    assert_ok(first)
    assert again.headers.get(REPLAYED) == "true"
    assert again.json() == first.json()
    assert len(recorder(api).delivered) == 1


async def test_keys_belong_to_one_account(api: Api) -> None:
    other = await account_auth(api, "globex")
    key = {"Idempotency-Key": "shared-key"}

    mine = await api.client.post(SEND, json=plain_email(), headers={**api.auth, **key})
    theirs = await api.client.post(SEND, json=plain_email(), headers={**other, **key})

    assert_ok(mine)
    assert_ok(theirs)
    assert REPLAYED not in theirs.headers
    assert mine.json()["data"]["id"] != theirs.json()["data"]["id"]
    assert len(recorder(api).delivered) == 2


async def test_keys_belong_to_one_account_even_with_another_body(api: Api) -> None:
    other = await account_auth(api, "globex")
    key = {"Idempotency-Key": "shared-key"}

    mine = await api.client.post(SEND, json=plain_email(), headers={**api.auth, **key})
    theirs = await api.client.post(
        SEND, json=plain_email(subject="Theirs"), headers={**other, **key}
    )

    assert_ok(mine)
    assert assert_ok(theirs)["data"]["subject"] == "Theirs"
    assert len(recorder(api).delivered) == 2


@pytest.mark.parametrize("path", [SEND, TEMPLATE])
async def test_a_key_over_256_characters_is_refused(api: Api, path: str) -> None:
    body = plain_email() if path == SEND else welcome_email()

    too_long = await api.client.post(path, json=body, headers=keyed(api, "k" * 257))

    assert_invalid(too_long, "Idempotency-Key")
    assert recorder(api).delivered == []
    longest = await api.client.post(path, json=body, headers=keyed(api, "k" * 256))
    assert_ok(longest)


@pytest.mark.parametrize("key", ["", "clé-unique", "tab\there"], ids=["empty", "non-ascii", "tab"])
async def test_an_unusable_key_is_refused(api: Api, key: str) -> None:
    response = await api.client.post(
        SEND,
        json=plain_email(),
        headers=[
            *((name.encode(), value.encode()) for name, value in api.auth.items()),
            (b"Idempotency-Key", key.encode()),
        ],
    )

    assert_invalid(response, "Idempotency-Key")
    assert recorder(api).delivered == []


async def test_a_refused_request_does_not_use_up_its_key(api: Api) -> None:
    invalid = await api.client.post(
        SEND, json=plain_email(to="nobody"), headers=keyed(api, "first-try")
    )
    valid = await api.client.post(SEND, json=plain_email(), headers=keyed(api, "first-try"))

    assert_invalid(invalid, "to")
    assert_ok(valid)
    assert REPLAYED not in valid.headers
    assert len(recorder(api).delivered) == 1


async def test_a_key_used_on_send_is_refused_on_template(api: Api) -> None:
    """/send and /template are different operations: reusing a key across them is the
    same key with another request, a conflict, and nothing is sent a second time."""
    sent = await api.client.post(SEND, json=plain_email(), headers=keyed(api, "cross"))

    crossed = await api.client.post(TEMPLATE, json=welcome_email(), headers=keyed(api, "cross"))

    assert_ok(sent)
    assert_error(crossed, 409, "IDEMPOTENCY_KEY_REUSED")
    assert "messages" not in crossed.text
    assert len(recorder(api).delivered) == 1


async def test_a_key_used_on_template_is_refused_on_send(api: Api) -> None:
    sent = await api.client.post(TEMPLATE, json=welcome_email(), headers=keyed(api, "cross"))

    crossed = await api.client.post(SEND, json=plain_email(), headers=keyed(api, "cross"))

    assert_ok(sent)
    assert_error(crossed, 409, "IDEMPOTENCY_KEY_REUSED")
    assert len(recorder(api).delivered) == 1


class DuplicatingProvider(RecordingEmailProvider):
    """While delivering its first message, sends the same request again, straight into the
    app on the same event loop: a duplicate arriving while the first is still running."""

    def __init__(self) -> None:
        super().__init__()
        self.app: Litestar | None = None
        self.duplicate: tuple[str, dict[str, Any], dict[str, str]] | None = None
        self.answers: list[httpx.Response] = []

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        if self.duplicate is not None and self.app is not None:
            path, body, headers = self.duplicate
            self.duplicate = None
            # httpx types its ASGI app more narrowly than Litestar types __call__.
            transport = httpx.ASGITransport(app=cast(Any, self.app))
            async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
                self.answers.append(await client.post(path, json=body, headers=headers))
        return await super().send(email, message_id=message_id)


async def test_a_duplicate_while_the_first_is_running_is_a_conflict() -> None:
    provider = DuplicatingProvider()
    async with open_api(memory_with(provider=provider)) as api:
        provider.app = api.client.app
        headers = keyed(api, "in-flight")
        provider.duplicate = (SEND, plain_email(), headers)

        first = await api.client.post(SEND, json=plain_email(), headers=headers)

        assert_ok(first)
        [duplicate] = provider.answers
        assert_error(duplicate, 409, "IDEMPOTENCY_IN_PROGRESS")
        assert len(provider.delivered) == 1
        again = await api.client.post(SEND, json=plain_email(), headers=headers)
        assert again.headers.get(REPLAYED) == "true"
        assert again.json() == first.json()
