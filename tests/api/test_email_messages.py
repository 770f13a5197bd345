"""GET /api/v1/email/messages/{id}: what became of a message, one account's own messages only."""

from __future__ import annotations

from tests.api.support import Api, account_auth, plain_email, welcome_email
from tests.support.envelope import MESSAGES, SEND, TEMPLATE, assert_error, assert_message, assert_ok


async def test_the_owner_gets_the_message_as_sent(api: Api) -> None:
    sent = assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))["data"]

    response = await api.client.get(f"{MESSAGES}/{sent['id']}", headers=api.auth)

    body = assert_ok(response)
    assert "retrieved" in body["message"].lower()
    assert_message(body["data"])
    assert body["data"] == sent
    assert body["data"]["status"] == "sent"


async def test_every_message_of_a_template_send_is_in_the_log(api: Api) -> None:
    to = ["ada@example.com", "grace@example.com"]
    sent = assert_ok(await api.client.post(TEMPLATE, json=welcome_email(to=to), headers=api.auth))

    for message in sent["data"]["messages"]:
        logged = assert_ok(await api.client.get(f"{MESSAGES}/{message['id']}", headers=api.auth))
        assert logged["data"] == message
        assert logged["data"]["template_id"] == "welcome"


async def test_another_accounts_message_is_not_found(api: Api) -> None:
    other = await account_auth(api, "globex")
    sent = assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))["data"]

    foreign = await api.client.get(f"{MESSAGES}/{sent['id']}", headers=other)
    missing = await api.client.get(f"{MESSAGES}/msg_missing", headers=other)

    foreign_body = assert_error(foreign, 404, "MESSAGE_NOT_FOUND")
    missing_body = assert_error(missing, 404, "MESSAGE_NOT_FOUND")
    assert "ada@example.com" not in foreign.text
    assert sent["subject"] not in foreign.text
    assert foreign_body.get("data") is None
    assert foreign_body["message"] == missing_body["message"]
    assert foreign_body["error"].replace(sent["id"], "<id>") == missing_body["error"].replace(
        "msg_missing", "<id>"
    )
    still = assert_ok(await api.client.get(f"{MESSAGES}/{sent['id']}", headers=api.auth))
    assert still["data"] == sent


async def test_an_unknown_message_is_not_found(api: Api) -> None:
    response = await api.client.get(f"{MESSAGES}/msg_does_not_exist", headers=api.auth)

    assert_error(response, 404, "MESSAGE_NOT_FOUND")


async def test_reading_the_log_needs_a_key(api: Api) -> None:
    sent = assert_ok(await api.client.post(SEND, json=plain_email(), headers=api.auth))["data"]

    response = await api.client.get(f"{MESSAGES}/{sent['id']}")

    assert_error(response, 401, "UNAUTHORIZED")
    assert sent["subject"] not in response.text
