"""Provider webhooks end to end: ``leadmail serve`` sending through each provider's stand-in
(tests/support/standin.py) with that provider's webhook secret set, a message sent over
HTTP, then the provider's webhooks about it signed as the provider signs them
(tests/support/webhooks.py): signed, forged, stale and replayed; a hard bounce keeps the
address from being mailed again. One server per provider, on SQLite.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.logs import assert_not_logged
from tests.e2e.mail import SENDER, EmailRig, email_rig
from tests.e2e.names import new_email
from tests.support.envelope import MESSAGES, SEND, assert_error, ok_data
from tests.support.webhooks import ProviderSecrets, event_payload

PROVIDERS = ["resend", "postmark", "sendgrid", "mailgun"]
WEBHOOKS = "/api/v1/webhooks"


@pytest.fixture(scope="module", params=PROVIDERS)
def hooked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[EmailRig, ProviderSecrets]]:
    provider: str = request.param
    secrets = ProviderSecrets.fresh()
    workdir = tmp_path_factory.mktemp(f"webhooks-{provider}")
    settings = {name.removeprefix("LEADMAIL_"): value for name, value in secrets.env().items()}
    with email_rig(
        provider,  # type: ignore[arg-type]
        f"sqlite:///{workdir / 'leadmail.db'}",
        workdir,
        name=f"webhooks-{provider}",
        **settings,
    ) as rig:
        yield rig, secrets


def send_one(rig: EmailRig, to: str) -> dict[str, Any]:
    with rig.client() as api:
        body = {"to": to, "subject": "Hello", "from": SENDER, "html": "<p>Hi</p>"}
        sent: dict[str, Any] = ok_data(api.post(SEND, json=body))
    assert sent["status"] == "sent", sent
    return sent


def post_webhook(
    rig: EmailRig, secrets: ProviderSecrets, payload: Any, **signing: Any
) -> httpx.Response:
    body, headers = secrets.signed(rig.provider, payload, **signing)
    with rig.server.client() as anonymous:  # no API key: the provider's proof instead
        return anonymous.post(f"{WEBHOOKS}/{rig.provider}", content=body, headers=headers)


def message(rig: EmailRig, message_id: str) -> dict[str, Any]:
    with rig.client() as api:
        return ok_data(api.get(f"{MESSAGES}/{message_id}"))  # type: ignore[no-any-return]


def test_a_signed_delivery_then_a_replay(hooked: tuple[EmailRig, ProviderSecrets]) -> None:
    rig, secrets = hooked
    to = new_email("delivered")
    sent = send_one(rig, to)
    payload = event_payload(rig.provider, "delivered", sent["provider_message_id"], recipient=to)

    first = post_webhook(rig, secrets, payload, svix_id="msg_first_delivery")
    replay = post_webhook(rig, secrets, payload, svix_id="msg_first_delivery")

    assert ok_data(first) == {"applied": 1, "duplicates": 0, "unknown": 0, "ignored": 0}
    assert ok_data(replay) == {"applied": 0, "duplicates": 1, "unknown": 0, "ignored": 0}
    shown = message(rig, sent["id"])
    assert shown["status"] == "delivered"
    assert [e["type"] for e in shown["events"]] == ["delivered"]


def _forge(provider: str, body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """The same request with its proof broken: the body changed after signing (every
    provider but Postmark signs it), or Postmark's password changed."""
    if provider == "postmark":
        return body, {"Authorization": "Basic cG9zdG1hcms6bm90LXRoZS1wYXNzd29yZA=="}
    if provider == "mailgun":
        return body.replace(b'"signature": "', b'"signature": "f', 1), headers
    return body + b" ", headers  # still JSON, no longer what was signed


@pytest.mark.parametrize("how", ["forged", "stale", "unsigned"])
def test_a_webhook_without_its_providers_proof_is_401_and_changes_nothing(
    hooked: tuple[EmailRig, ProviderSecrets], how: str
) -> None:
    rig, secrets = hooked
    if how == "stale" and rig.provider == "postmark":
        pytest.skip("Postmark's proof (basic credentials) carries no moment to be stale")
    to = new_email(how)
    sent = send_one(rig, to)
    payload = event_payload(rig.provider, "hard_bounce", sent["provider_message_id"], recipient=to)
    at = time.time() - 301 if how == "stale" else None
    body, headers = secrets.signed(rig.provider, payload, at=at)
    if how == "forged":
        body, headers = _forge(rig.provider, body, headers)
    elif how == "unsigned":
        headers = {}
        if rig.provider == "mailgun":
            body = body.replace(b'"signature": {', b'"unsigned": {', 1)

    with rig.server.client() as anonymous:
        response = anonymous.post(f"{WEBHOOKS}/{rig.provider}", content=body, headers=headers)

    assert_error(response, 401, "UNAUTHORIZED")
    shown = message(rig, sent["id"])
    assert (shown["status"], shown["events"]) == ("sent", [])
    # Not suppressed either: the address can still be mailed.
    assert send_one(rig, to)["status"] == "sent"


def test_a_hard_bounce_keeps_the_address_from_being_mailed_again(
    hooked: tuple[EmailRig, ProviderSecrets],
) -> None:
    rig, secrets = hooked
    to = new_email("bounces")
    sent = send_one(rig, to)
    payload = event_payload(rig.provider, "hard_bounce", sent["provider_message_id"], recipient=to)

    assert ok_data(post_webhook(rig, secrets, payload))["applied"] == 1

    shown = message(rig, sent["id"])
    assert shown["status"] == "bounced"
    assert [(e["type"], e["bounce"]) for e in shown["events"]] == [("bounced", "hard")]
    rig.standin.reset()
    with rig.client() as api:
        again = api.post(
            SEND, json={"to": to, "subject": "Again", "from": SENDER, "html": "<p>Hi</p>"}
        )
    assert_error(again, 422, "RECIPIENT_SUPPRESSED")
    assert rig.standin.requests == []  # the provider was not called
    with rig.client() as api:
        listed = ok_data(api.get("/api/v1/suppressions", params={"reason": "bounced"}))
    [entry] = [e for e in listed["items"] if e["email"] == to]
    assert (entry["reason"], entry["message_id"]) == ("bounced", sent["id"])


def test_the_webhook_secrets_are_never_logged(hooked: tuple[EmailRig, ProviderSecrets]) -> None:
    rig, secrets = hooked
    sent = send_one(rig, new_email("logged"))
    post_webhook(rig, secrets, event_payload(rig.provider, "opened", sent["provider_message_id"]))
    assert_not_logged(
        rig.server,
        "a webhook secret",
        secrets.resend_secret,
        secrets.sendgrid_public,
        secrets.mailgun_key,
        secrets.postmark_auth,
    )


def test_a_campaigns_message_is_matched_too(hooked: tuple[EmailRig, ProviderSecrets]) -> None:
    rig, secrets = hooked
    tag = f"wh-{rig.provider}-{time.time_ns()}"
    addresses = [new_email("campaign") for _ in range(2)]
    with rig.client() as api:
        for address in addresses:
            ok_data(
                api.post("/api/v1/leads", json={"name": "Ada", "email": address, "tags": [tag]})
            )
        created = api.post(
            "/api/v1/campaigns",
            json={
                "name": "Webhooks",
                "template_id": "welcome",
                "audience": {"tag": [tag]},
                "variables": {
                    "school_name": "Northwind Academy",
                    "courses_link": "https://example.com/courses",
                    "contact_email": "hello@example.com",
                },
                "from": SENDER,
            },
        )
        assert created.status_code == 201, created.text
        campaign = created.json()["data"]
        deadline = time.monotonic() + 20
        while campaign["status"] != "done":
            assert time.monotonic() < deadline, campaign
            time.sleep(0.2)
            campaign = ok_data(api.get(f"/api/v1/campaigns/{campaign['id']}"))
        [first, *_] = ok_data(api.get(f"/api/v1/campaigns/{campaign['id']}/recipients"))["items"]
    sent = message(rig, first["message_id"])
    payload = event_payload(
        rig.provider, "complained", sent["provider_message_id"], recipient=first["email"]
    )

    assert ok_data(post_webhook(rig, secrets, payload))["applied"] == 1

    assert message(rig, first["message_id"])["status"] == "complained"
    with rig.client() as api:
        again = api.post(
            SEND, json={"to": first["email"], "subject": "Hi", "from": SENDER, "html": "<p>Hi</p>"}
        )
    assert_error(again, 422, "RECIPIENT_SUPPRESSED")
