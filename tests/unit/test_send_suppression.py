"""The suppression list on the API's send paths (the send policy, step 2 of the way out),
on the memory adapters: a plain send drops suppressed addresses, a template send marks
them, a transactional send honours only bounces and complaints, a retry re-reads it."""

from __future__ import annotations

import dataclasses

import pytest

from leadmail.domain.delivery import ProviderUnavailable
from leadmail.domain.email import MessageStatus
from leadmail.domain.suppressions import (
    RecipientSuppressed,
    Suppression,
    SuppressionReason,
    suppression_address,
)
from leadmail.services.results import DeliveryUnavailable
from tests.unit.test_email_service import ACCOUNT, OTHER, T0, Rig, make_rig, plain, welcome

R = SuppressionReason


async def suppress(rig: Rig, raw: str, reason: R = R.MANUAL, account: str = ACCOUNT) -> None:
    await rig.suppressions.add(Suppression.of(account, suppression_address(raw), reason, T0))


async def test_a_plain_send_goes_to_the_addresses_left_and_says_so_on_its_message() -> None:
    rig = await make_rig()
    await suppress(rig, "GRACE@example.com", R.UNSUBSCRIBED)

    result = await rig.send(ACCOUNT, plain(to=["ada@example.com", "Grace <grace@Example.com>"]))

    [message] = result.messages
    assert message.status is MessageStatus.SENT
    assert message.to == ("ada@example.com",)
    [delivered] = rig.sender.delivered
    assert [box.address for box in delivered.email.to] == ["ada@example.com"]


async def test_a_plain_send_with_no_one_left_is_refused_with_nothing_stored_or_sent() -> None:
    rig = await make_rig()
    await suppress(rig, "ada@example.com", R.BOUNCED)
    await suppress(rig, "grace@example.com")

    with pytest.raises(RecipientSuppressed) as caught:
        await rig.send(ACCOUNT, plain(to=["Ada <ADA@example.com>", "grace@example.com"]))

    assert caught.value.addresses == ("ADA@example.com", "grace@example.com")
    assert "ADA@example.com, grace@example.com" in caught.value.message
    assert rig.sender.attempts == 0
    assert len(rig.log) == 0


async def test_another_accounts_list_changes_nothing() -> None:
    rig = await make_rig()
    await suppress(rig, "ada@example.com", R.COMPLAINED, account=OTHER)

    result = await rig.send(ACCOUNT, plain(to="ada@example.com"))

    assert result.messages[0].status is MessageStatus.SENT
    assert rig.sender.attempts == 1


async def test_a_template_send_marks_each_suppressed_recipient_in_order() -> None:
    rig = await make_rig()
    await suppress(rig, "b@example.com", R.UNSUBSCRIBED)

    result = await rig.send_template(
        ACCOUNT, welcome(["a@example.com", "B@example.com", "c@example.com"])
    )

    statuses = [(m.to, m.status) for m in result.messages]
    assert statuses == [
        (("a@example.com",), MessageStatus.SENT),
        (("B@example.com",), MessageStatus.SUPPRESSED),
        (("c@example.com",), MessageStatus.SENT),
    ]
    held = result.messages[1]
    assert "suppression list (unsubscribed)" in held.last_error
    assert (held.attempts, held.provider_message_id) == (0, None)
    assert await rig.log.get(ACCOUNT, held.message_id) == held
    assert sorted(d.email.to[0].address for d in rig.sender.delivered) == [
        "a@example.com",
        "c@example.com",
    ]


async def test_a_template_send_to_suppressed_recipients_only_sends_nothing() -> None:
    rig = await make_rig()
    await suppress(rig, "a@example.com")

    result = await rig.send_template(ACCOUNT, welcome("a@example.com"))

    assert [m.status for m in result.messages] == [MessageStatus.SUPPRESSED]
    assert rig.sender.attempts == 0


@pytest.mark.parametrize(
    ("reason", "sent"),
    [(R.UNSUBSCRIBED, True), (R.MANUAL, True), (R.BOUNCED, False), (R.COMPLAINED, False)],
)
async def test_a_transactional_send_honours_only_bounces_and_complaints(
    reason: R, sent: bool
) -> None:
    rig = await make_rig()
    await suppress(rig, "ada@example.com", reason)
    request = dataclasses.replace(plain(to="ada@example.com"), transactional=True)
    template = dataclasses.replace(welcome("ada@example.com"), transactional=True)

    if sent:
        assert (await rig.send(ACCOUNT, request)).messages[0].status is MessageStatus.SENT
    else:
        with pytest.raises(RecipientSuppressed):
            await rig.send(ACCOUNT, request)
    [message] = (await rig.send_template(ACCOUNT, template)).messages
    assert message.status is (MessageStatus.SENT if sent else MessageStatus.SUPPRESSED)
    assert rig.sender.attempts == (2 if sent else 0)


async def test_a_retry_under_its_key_does_not_mail_an_address_suppressed_since() -> None:
    rig = await make_rig()
    rig.sender.fail_for("b@example.com", ProviderUnavailable("503"))
    to = ["a@example.com", "b@example.com"]
    with pytest.raises(DeliveryUnavailable):
        await rig.send_template(ACCOUNT, welcome(to), "k-1")
    rig.sender.fail_for("b@example.com", None)
    await suppress(rig, "b@example.com", R.UNSUBSCRIBED)
    attempts = rig.sender.attempts

    again = await rig.send_template(ACCOUNT, welcome(to), "k-1")

    assert [m.status for m in again.messages] == [MessageStatus.SENT, MessageStatus.SUPPRESSED]
    assert rig.sender.attempts == attempts  # a was sent the first time, b is not mailed
    assert [d.email.to[0].address for d in rig.sender.delivered] == ["a@example.com"]
