"""The memory adapters' RecordingEmailProvider as a batching provider, where it does what
the contract suite (tests/contract/test_email_batches.py) cannot script on the wire."""

from __future__ import annotations

import pytest

from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.domain.delivery import BatchItem, ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Mailbox, OutgoingEmail


def batch(*addresses: str) -> list[BatchItem]:
    return [
        BatchItem(
            OutgoingEmail(Mailbox("news@school.example"), (Mailbox(a),), "Open day", "<p>Hi</p>"),
            f"msg_{i}",
        )
        for i, a in enumerate(addresses)
    ]


async def test_a_recipient_not_taken_now_fails_the_batch_before_any_delivery() -> None:
    provider = RecordingEmailProvider(batch_limit=10)
    provider.fail_for("b@example.com", ProviderUnavailable("answered 503"))

    with pytest.raises(ProviderUnavailable):
        await provider.send_batch(batch("a@example.com", "b@example.com"), batch_key="k1")

    assert provider.delivered == []
    assert provider.batch_keys == ["k1"]


async def test_a_refused_recipient_is_its_own_result_and_the_rest_go_out() -> None:
    provider = RecordingEmailProvider(batch_limit=10)
    provider.fail_for("b@example.com", ProviderRejected(422, "inactive"))

    results = await provider.send_batch(
        batch("a@example.com", "b@example.com", "c@example.com"), batch_key="k2"
    )

    assert [r.provider_message_id for r in results] == ["rec-1", None, "rec-2"]
    assert isinstance(results[1].error, ProviderRejected)
    assert [d.message_id for d in provider.delivered] == ["msg_0", "msg_2"]


async def test_without_keeps_idempotency_the_same_key_delivers_again() -> None:
    # Postmark keeps no key: a retried batch is a new batch.
    provider = RecordingEmailProvider(batch_limit=10)
    items = batch("a@example.com")

    await provider.send_batch(items, batch_key="k3")
    await provider.send_batch(items, batch_key="k3")

    assert len(provider.delivered) == 2
