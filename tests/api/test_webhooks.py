"""POST /api/v1/webhooks/{provider} in process, on the memory adapters: a route only for a
provider whose setting is set, the provider's proof checked before anything is stored,
events applied once and shown with the message, hard bounces and complaints suppressed."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from leadmail.bootstrap import Adapters
from leadmail.config import Settings
from leadmail.domain.email import Message, MessageStatus, new_message_id
from leadmail.domain.suppressions import SuppressionReason, address_digest
from tests.api.support import Api, open_api
from tests.support.envelope import MESSAGES, assert_error, ok_data
from tests.support.webhooks import ProviderSecrets, event_payload

PROVIDERS = ["resend", "postmark", "sendgrid", "mailgun"]
SECRETS = ProviderSecrets.fresh()
WEBHOOKS = "/api/v1/webhooks"
SENDGRID_EXAMPLE_SIGNATURE = (
    "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15T"
    "luLtEZtM="
)


def webhook_settings() -> Settings:
    return Settings.from_env({**SECRETS.env(), "LEADMAIL_MIGRATE_ON_START": "false"})


@pytest.fixture
async def hooked() -> AsyncIterator[Api]:
    async with open_api(Adapters.in_memory(), webhook_settings()) as opened:
        yield opened


async def sent_message(api: Api, provider: str, to: str = "ada@example.com") -> Message:
    """A message of the API's account that ``provider`` took (its id in the provider's own
    form: Mailgun's in angle brackets)."""
    now = datetime.now(UTC)
    pending = Message(
        new_message_id(), api.account_id, "school@example.com", (to,), "Hi", None,
        MessageStatus.PENDING, provider, None, 0, "", now, now,
    )  # fmt: skip
    await api.adapters.messages.add([pending])
    ids = {"mailgun": f"<{new_message_id()}@mg.example.com>", "sendgrid": "Ac8H6cCITpmKEGtuZ0CMSQ"}
    sent = pending.sent(ids.get(provider, new_message_id()), 1, pending.created_at)
    await api.adapters.messages.update([sent])
    return sent


async def post(
    api: Api, provider: str, payload: Any, headers: dict[str, str] | None = None, **signing: Any
) -> Any:
    body, signed = SECRETS.signed(provider, payload, **signing)
    return await api.client.post(
        f"{WEBHOOKS}/{provider}",
        content=body,
        headers={"Content-Type": "application/json", **signed, **(headers or {})},
    )


async def message_data(api: Api, message: Message) -> Any:
    return ok_data(await api.client.get(f"{MESSAGES}/{message.message_id}", headers=api.auth))


def payload_for(provider: str, kind: str, message: Message, **fields: Any) -> Any:
    assert message.provider_message_id is not None
    return event_payload(provider, kind, message.provider_message_id, **fields)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_without_its_setting_a_provider_has_no_route(api: Api, provider: str) -> None:
    message = await sent_message(api, provider)
    response = await post(api, provider, payload_for(provider, "delivered", message))
    assert_error(response, 404, "NOT_FOUND")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_signed_delivery_moves_the_message_and_is_shown_with_it(
    hooked: Api, provider: str
) -> None:
    message = await sent_message(hooked, provider)

    response = await post(hooked, provider, payload_for(provider, "delivered", message))

    assert response.status_code == 200, response.text
    assert ok_data(response) == {"applied": 1, "duplicates": 0, "unknown": 0, "ignored": 0}
    shown = await message_data(hooked, message)
    assert shown["status"] == "delivered"
    [event] = shown["events"]
    assert event["type"] == "delivered"
    assert event["bounce"] is None
    assert event["at"].endswith("Z")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_replay_answers_200_and_changes_nothing(hooked: Api, provider: str) -> None:
    message = await sent_message(hooked, provider)
    payload = payload_for(provider, "opened", message, event_id="ev-replayed")
    first = await post(hooked, provider, payload, svix_id="msg_replayed")

    again = await post(hooked, provider, payload, svix_id="msg_replayed")

    assert ok_data(first)["applied"] == 1
    assert ok_data(again) == {"applied": 0, "duplicates": 1, "unknown": 0, "ignored": 0}
    assert len((await message_data(hooked, message))["events"]) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_unknown_message_is_acknowledged_and_dropped(hooked: Api, provider: str) -> None:
    payload = event_payload(provider, "delivered", "not-one-of-ours")
    response = await post(hooked, provider, payload)
    assert ok_data(response) == {"applied": 0, "duplicates": 0, "unknown": 1, "ignored": 0}


@pytest.mark.parametrize("kind", ["hard_bounce", "complained"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_hard_bounce_or_a_complaint_suppresses_the_address(
    hooked: Api, provider: str, kind: str
) -> None:
    message = await sent_message(hooked, provider, to="Grace <Grace@Example.org>")

    response = await post(
        hooked, provider, payload_for(provider, kind, message, recipient="Grace@Example.org")
    )

    assert ok_data(response)["applied"] == 1
    entry = await hooked.adapters.suppressions.get(
        hooked.account_id, address_digest("grace@example.org")
    )
    assert entry is not None
    reason = SuppressionReason.BOUNCED if kind == "hard_bounce" else SuppressionReason.COMPLAINED
    assert (entry.reason, entry.message_id) == (reason, message.message_id)
    shown = await message_data(hooked, message)
    assert shown["status"] == ("bounced" if kind == "hard_bounce" else "complained")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_soft_bounce_is_recorded_only(hooked: Api, provider: str) -> None:
    message = await sent_message(hooked, provider)

    await post(hooked, provider, payload_for(provider, "soft_bounce", message))

    shown = await message_data(hooked, message)
    assert shown["status"] == "sent"
    assert [(e["type"], e["bounce"]) for e in shown["events"]] == [("bounced", "soft")]
    assert (
        await hooked.adapters.suppressions.get(hooked.account_id, address_digest("ada@example.com"))
        is None
    )


def forged(provider: str) -> dict[str, str]:
    """Headers that replace the provider's proof with a wrong one."""
    return {
        "resend": {"svix-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
        # SendGrid's own example signature: a good one, of another body under another key.
        "sendgrid": {"X-Twilio-Email-Event-Webhook-Signature": SENDGRID_EXAMPLE_SIGNATURE},
        "postmark": {"Authorization": "Basic cG9zdG1hcms6d3Jvbmc="},
        "mailgun": {},
    }[provider]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["forged", "stale", "missing"])
async def test_without_a_good_proof_401_and_nothing_stored(
    hooked: Api, provider: str, how: str
) -> None:
    message = await sent_message(hooked, provider)
    payload = payload_for(provider, "hard_bounce", message)
    if how == "forged" and provider == "mailgun":
        body, _ = SECRETS.signed(provider, payload)
        body = body.replace(b'"signature": "', b'"signature": "0', 1)
        response = await hooked.client.post(f"{WEBHOOKS}/mailgun", content=body)
    elif how == "forged":
        response = await post(hooked, provider, payload, forged(provider))
    elif how == "stale" and provider != "postmark":  # Postmark's proof has no moment
        response = await post(hooked, provider, payload, at=time.time() - 301)
    else:
        raw = SECRETS.signed(provider, payload)[0]
        if provider == "mailgun":
            raw = raw.replace(b'"signature": {', b'"unsigned": {', 1)
        response = await hooked.client.post(f"{WEBHOOKS}/{provider}", content=raw)

    assert_error(response, 401, "UNAUTHORIZED")
    challenge = response.headers.get("WWW-Authenticate")
    assert challenge == ('Basic realm="leadmail webhooks"' if provider == "postmark" else None)
    shown = await message_data(hooked, message)
    assert (shown["status"], shown["events"]) == ("sent", [])
    assert (
        await hooked.adapters.suppressions.get(hooked.account_id, address_digest("ada@example.com"))
        is None
    )


async def test_no_api_key_is_asked_and_a_query_string_is_let_through(hooked: Api) -> None:
    message = await sent_message(hooked, "postmark")
    body, headers = SECRETS.signed("postmark", payload_for("postmark", "delivered", message))
    response = await hooked.client.post(
        f"{WEBHOOKS}/postmark?from=postmark", content=body, headers=headers
    )
    assert ok_data(response)["applied"] == 1


async def test_a_body_that_is_not_json_is_400_once_its_proof_holds(hooked: Api) -> None:
    _, headers = SECRETS.signed("postmark", {})
    response = await hooked.client.post(
        f"{WEBHOOKS}/postmark", content=b"{not json", headers=headers
    )
    assert_error(response, 400, "MALFORMED_JSON")


async def test_other_methods_are_405_and_the_routes_are_not_in_the_document(hooked: Api) -> None:
    response = await hooked.client.get(f"{WEBHOOKS}/resend")
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    document = (await hooked.client.get("/schema/openapi.json")).json()
    assert not [path for path in document["paths"] if path.startswith(WEBHOOKS)]
