"""An account's daily send quota, in process: a send that would cross it is 429
QUOTA_EXCEEDED with Retry-After and data.reset_at, nothing stored or sent; a template send
that would cross it sends nothing; withheld recipients and idempotent replays take no
place; another account is not concerned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from leadmail.domain.suppressions import SuppressionReason
from tests.api.support import Api, account_auth, plain_email, recorder, welcome_email
from tests.support.envelope import MESSAGES, SEND, SEND_TEMPLATE, assert_error, ok_data


async def set_quota(api: Api, quota: int, account_id: str | None = None) -> None:
    assert await api.services.quota.set(account_id or api.account_id, quota)


async def messages(api: Api) -> list[dict[str, object]]:
    items: list[dict[str, object]] = ok_data(await api.client.get(MESSAGES, headers=api.auth))[
        "items"
    ]
    return items


async def test_a_send_past_the_quota_is_429_with_nothing_sent(api: Api) -> None:
    await set_quota(api, 2)
    for n in range(2):
        sent = await api.client.post(
            SEND, json=plain_email(to=f"l{n}@example.com"), headers=api.auth
        )
        assert sent.status_code == 200, sent.text

    refused = await api.client.post(SEND, json=plain_email(), headers=api.auth)

    body = assert_error(refused, 429, "QUOTA_EXCEEDED")
    assert body["message"] == "Daily quota reached"
    assert "quota of 2 messages is reached: 1 more requested, 0 left" in body["error"]
    reset_at = datetime.fromisoformat(body["data"]["reset_at"])
    assert body["data"]["quota"] == 2
    assert reset_at == datetime.combine(
        datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC
    )
    retry_after = int(refused.headers["retry-after"])
    assert 0 < retry_after <= 86_400
    assert len(recorder(api).delivered) == 2
    assert len(await messages(api)) == 2


async def test_a_template_send_that_would_cross_it_sends_nothing(api: Api) -> None:
    await set_quota(api, 3)
    await api.client.post(SEND, json=plain_email(), headers=api.auth)
    to = ["a@example.com", "b@example.com", "c@example.com"]

    refused = await api.client.post(SEND_TEMPLATE, json=welcome_email(to=to), headers=api.auth)
    fits = await api.client.post(SEND_TEMPLATE, json=welcome_email(to=to[:2]), headers=api.auth)

    assert_error(refused, 429, "QUOTA_EXCEEDED")
    assert "3 more requested, 2 left" in refused.json()["error"]
    assert fits.status_code == 200, fits.text
    assert len(recorder(api).delivered) == 3


async def test_withheld_recipients_and_replays_take_no_place(api: Api) -> None:
    await set_quota(api, 2)
    await api.services.suppressions.add(api.account_id, "b@example.com", SuppressionReason.MANUAL)
    to = ["a@example.com", "b@example.com"]

    first = await api.client.post(SEND_TEMPLATE, json=welcome_email(to=to), headers=api.auth)
    keyed = {**api.auth, "Idempotency-Key": "quota-once"}
    once = await api.client.post(SEND, json=plain_email(), headers=keyed)
    replayed = await api.client.post(SEND, json=plain_email(), headers=keyed)

    assert first.status_code == 200, first.text  # b withheld: one place taken
    assert once.status_code == 200, once.text
    assert replayed.status_code == 200, replayed.text
    assert replayed.headers["idempotent-replayed"] == "true"
    assert (await api.services.quota.use(api.account_id)).sent == 2


async def test_another_account_has_its_own_quota(api: Api) -> None:
    await set_quota(api, 1)
    await api.client.post(SEND, json=plain_email(), headers=api.auth)
    other = await account_auth(api, "acc_other_school")

    assert_error(
        await api.client.post(SEND, json=plain_email(), headers=api.auth), 429, "QUOTA_EXCEEDED"
    )
    assert (await api.client.post(SEND, json=plain_email(), headers=other)).status_code == 200


async def test_no_quota_is_no_limit(api: Api) -> None:
    for n in range(5):
        sent = await api.client.post(
            SEND, json=plain_email(to=f"l{n}@example.com"), headers=api.auth
        )
        assert sent.status_code == 200
    assert (await api.services.quota.use(api.account_id)).sent == 0  # nothing counted
