"""The provider says no: a refusal is a 502, an outage a 503 the client may retry with the
same Idempotency-Key, and either way `data` holds what happened to every message."""

from __future__ import annotations

from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from tests.api.support import Api, email_settings, open_api, plain_email, recorder, welcome_email
from tests.support.envelope import MESSAGES, SEND, TEMPLATE, assert_error, assert_message, assert_ok

RECIPIENTS = ["ada@example.com", "bob@example.com", "carol@example.com"]


async def test_a_refusal_is_a_502_with_the_providers_reason_and_the_failed_message(
    api: Api,
) -> None:
    recorder(api).fail_next(ProviderRejected(422, "Invalid 'To' address"))

    response = await api.client.post(SEND, json=plain_email(), headers=api.auth)

    body = assert_error(response, 502, "PROVIDER_REJECTED")
    assert "Invalid 'To' address" in body["error"]
    message = body["data"]
    assert_message(message)
    assert message["status"] == "failed"
    assert "Invalid 'To' address" in message["last_error"]
    assert message["attempts"] == 1  # a refusal is not retried
    assert message["provider_message_id"] is None
    assert message["to"] == ["ada@example.com"]
    assert recorder(api).delivered == []
    assert recorder(api).attempts == 1
    logged = assert_ok(await api.client.get(f"{MESSAGES}/{message['id']}", headers=api.auth))
    assert logged["data"] == message


async def test_an_outage_is_retried_then_a_503_with_retry_after() -> None:
    async with open_api(settings=email_settings(email_max_attempts=2)) as api:
        recorder(api).fail_next(ProviderUnavailable("connection refused"), times=10)

        response = await api.client.post(SEND, json=plain_email(), headers=api.auth)

        body = assert_error(response, 503, "PROVIDER_UNAVAILABLE")
        assert "connection refused" in body["error"]
        retry_after = response.headers.get("Retry-After")
        assert retry_after is not None
        assert retry_after.isdigit()
        assert int(retry_after) > 0
        message = body["data"]
        assert_message(message)
        assert message["status"] == "failed"
        assert message["attempts"] == 2
        assert "connection refused" in message["last_error"]
        assert recorder(api).attempts == 2
        assert recorder(api).delivered == []


async def test_an_outage_that_ends_within_the_attempts_is_a_success() -> None:
    async with open_api(settings=email_settings(email_max_attempts=2)) as api:
        recorder(api).fail_next(ProviderUnavailable("busy"), times=1)

        response = await api.client.post(SEND, json=plain_email(), headers=api.auth)

        message = assert_ok(response)["data"]
        assert message["status"] == "sent"
        assert message["attempts"] == 2
        assert message["last_error"] == ""
        assert len(recorder(api).delivered) == 1


async def test_a_template_send_refused_for_one_recipient_is_a_502_listing_all(api: Api) -> None:
    recorder(api).fail_for("bob@example.com", ProviderRejected(422, "Mailbox does not exist"))

    response = await api.client.post(TEMPLATE, json=welcome_email(to=RECIPIENTS), headers=api.auth)

    body = assert_error(response, 502, "PROVIDER_REJECTED")
    assert "Mailbox does not exist" in body["error"]
    messages = body["data"]["messages"]
    assert [m["status"] for m in messages] == ["sent", "failed", "sent"]
    assert [m["to"] for m in messages] == [[a] for a in RECIPIENTS]


async def test_a_partial_outage_is_retried_for_the_failed_recipient_only() -> None:
    key = {"Idempotency-Key": "welcome-batch-1"}
    async with open_api(settings=email_settings(email_max_attempts=1)) as api:
        mail = recorder(api)
        mail.fail_for("bob@example.com", ProviderUnavailable("mailbox server down"))
        request = welcome_email(to=RECIPIENTS)

        first = await api.client.post(TEMPLATE, json=request, headers={**api.auth, **key})

        body = assert_error(first, 503, "PROVIDER_UNAVAILABLE")
        assert "Retry-After" in first.headers
        assert "1 of 3" in body["error"]
        messages = body["data"]["messages"]
        for message in messages:
            assert_message(message)
        assert [m["to"] for m in messages] == [[a] for a in RECIPIENTS]
        assert [m["status"] for m in messages] == ["sent", "failed", "sent"]
        assert "mailbox server down" in messages[1]["last_error"]
        assert [m["last_error"] for m in (messages[0], messages[2])] == ["", ""]
        assert sorted(d.email.to[0].address for d in mail.delivered) == [
            "ada@example.com",
            "carol@example.com",
        ]
        delivered_before = len(mail.delivered)

        mail.fail_for("bob@example.com", None)
        second = await api.client.post(TEMPLATE, json=request, headers={**api.auth, **key})

        retried = assert_ok(second)["data"]["messages"]
        assert len(mail.delivered) == delivered_before + 1
        [resent] = mail.delivered[delivered_before:]
        assert [box.address for box in resent.email.to] == ["bob@example.com"]
        assert resent.message_id == messages[1]["id"]
        assert [m["id"] for m in retried] == [m["id"] for m in messages]
        assert [m["status"] for m in retried] == ["sent", "sent", "sent"]
        assert [m["attempts"] for m in retried] == [1, 2, 1]
        assert retried[1]["last_error"] == ""
        assert (retried[0], retried[2]) == (messages[0], messages[2])

        third = await api.client.post(TEMPLATE, json=request, headers={**api.auth, **key})

        assert third.status_code == 200
        assert third.headers.get("Idempotent-Replayed") == "true"
        assert third.json() == second.json()
        assert len(mail.delivered) == delivered_before + 1


async def test_a_failed_plain_send_retried_with_its_key_keeps_its_message_id() -> None:
    key = {"Idempotency-Key": "plain-retry"}
    async with open_api(settings=email_settings(email_max_attempts=1)) as single:
        recorder(single).fail_next(ProviderUnavailable("timeout"), times=1)
        first = await single.client.post(SEND, json=plain_email(), headers={**single.auth, **key})
        failed = assert_error(first, 503, "PROVIDER_UNAVAILABLE")["data"]

        second = await single.client.post(SEND, json=plain_email(), headers={**single.auth, **key})

        sent = assert_ok(second)["data"]
        assert sent["id"] == failed["id"]
        assert sent["status"] == "sent"
        assert sent["attempts"] == 2
        [delivered] = recorder(single).delivered
        assert delivered.message_id == failed["id"]
