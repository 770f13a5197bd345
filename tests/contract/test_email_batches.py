"""The EmailProvider's batch call (ports/mail.py: send_batch), run against every
implementation: the HTTP provider per dialect against the stand-in (Resend's and
Postmark's batch endpoints, one message per request for the others), the console, the
recording provider as a one-per-request provider and as a batching one that keeps keys.
"""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.adapters.mail.providers import DIALECTS, max_batch_of
from leadmail.domain.delivery import BatchItem, ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Mailbox, OutgoingEmail
from tests.contract.mail_support import (
    BATCH_EVERY,
    BATCHING,
    HTTP,
    KEEPS_KEYS,
    ONE_PER_REQUEST,
    RECORDING_BATCHES,
    SCRIPTED,
    UNAVAILABLE,
    Harness,
    HttpHarness,
    unavailable_cases,
)
from tests.support.mail import SECRET

every = pytest.mark.parametrize("mail", BATCH_EVERY, indirect=True)
batching = pytest.mark.parametrize("mail", BATCHING, indirect=True)
one_per_request = pytest.mark.parametrize("mail", ONE_PER_REQUEST, indirect=True)
keeps_keys = pytest.mark.parametrize("mail", KEEPS_KEYS, indirect=True)
batching_http = pytest.mark.parametrize("mail", [n for n in BATCHING if n in HTTP], indirect=True)
scripted = pytest.mark.parametrize("mail", [*SCRIPTED, RECORDING_BATCHES], indirect=True)


def items(count: int, tag: str = "a") -> list[BatchItem]:
    sender = Mailbox.parse("Open Day <news@school.example>")
    return [
        BatchItem(
            OutgoingEmail(
                sender=sender,
                to=(Mailbox.parse(f"Lead {i} <lead{i}.{tag}@example.com>"),),
                subject=f"March open day, {tag} {i}",
                html=f"<p>Hello lead {i}: Grüße 🎉</p>",
            ),
            f"msg_{tag}_{i}",
        )
        for i in range(count)
    ]


def ids_of(batch: list[BatchItem]) -> list[str]:
    return [item.message_id for item in batch]


def as_sent(provider: str, message: dict[str, Any]) -> tuple[str, list[str], str, str]:
    """(from, to, subject, html) of one message of a batch request, as its provider reads
    it (Postmark's recipients are one comma-separated string)."""
    if provider == "resend":
        return message["from"], message["to"], message["subject"], message["html"]
    to = [box.strip() for box in message["To"].split(", ")]
    return message["From"], to, message["Subject"], message["HtmlBody"]


class TestTheBatchLimit:
    @every
    def test_the_limit_and_idempotency_are_the_providers(self, mail: Harness) -> None:
        if mail.kind in DIALECTS:
            dialect = DIALECTS[mail.kind]
            assert mail.provider.batch_limit == dialect.max_batch == max_batch_of(mail.kind)
            assert mail.provider.keeps_idempotency == bool(dialect.idempotency_header)
        elif mail.kind == RECORDING_BATCHES:
            assert (mail.provider.batch_limit, mail.provider.keeps_idempotency) == (100, True)
        else:  # the console, and the recording provider as configured by default
            assert (mail.provider.batch_limit, mail.provider.keeps_idempotency) == (1, False)

    @every
    @pytest.mark.parametrize("too_many", [0, 1])
    async def test_an_empty_or_oversized_batch_is_refused_before_any_request(
        self, mail: Harness, too_many: int
    ) -> None:
        count = mail.provider.batch_limit + 1 if too_many else 0
        with pytest.raises(ValueError, match="a batch holds 1 to"):
            await mail.provider.send_batch(items(count), batch_key="batch_bad")
        if isinstance(mail, HttpHarness):
            assert mail.standin.requests == []

    @batching
    async def test_a_message_id_twice_is_refused(self, mail: Harness) -> None:
        [item] = items(1)

        with pytest.raises(ValueError, match="each message id once"):
            await mail.provider.send_batch([item, item], batch_key="batch_twice")

        assert mail.deliveries() == 0


class TestAccepted:
    @every
    async def test_a_full_batch_answers_each_message_in_order(self, mail: Harness) -> None:
        batch = items(min(mail.provider.batch_limit, 120))

        results = await mail.provider.send_batch(batch, batch_key="batch_full")

        assert [r.message_id for r in results] == ids_of(batch)
        assert all(r.error is None for r in results)
        provider_ids = [r.provider_message_id for r in results]
        assert None not in provider_ids
        assert len(set(provider_ids)) == len(batch)
        if mail.kind == "console":
            assert provider_ids == [f"console-{m}" for m in ids_of(batch)]
        else:
            assert provider_ids == mail.issued_ids(ids_of(batch))

    @batching
    async def test_a_batch_is_one_request_carrying_every_message(self, mail: Harness) -> None:
        batch = items(7)

        await mail.provider.send_batch(batch, batch_key="batch_one_request")

        assert mail.deliveries() == 7
        if isinstance(mail, HttpHarness):
            [request] = mail.standin.requests
            assert request.is_batch
            assert [as_sent(mail.kind, m) for m in request.json()] == [
                (
                    i.email.sender.formatted(),
                    [b.formatted() for b in i.email.to],
                    i.email.subject,
                    i.email.html,
                )
                for i in batch
            ]

    @one_per_request
    async def test_one_per_request_goes_through_the_single_endpoint(self, mail: Harness) -> None:
        [item] = items(1)

        [result] = await mail.provider.send_batch([item], batch_key="batch_single")

        assert result.message_id == item.message_id
        assert result.error is None
        assert result.provider_message_id is not None
        if isinstance(mail, HttpHarness):
            [request] = mail.standin.requests
            assert not request.is_batch
            assert result.provider_message_id == request.provider_id

    @batching_http
    async def test_an_answer_without_ids_is_accepted_with_the_ids_unknown(
        self, mail: Harness
    ) -> None:
        assert isinstance(mail, HttpHarness)
        mail.standin.answer_next(1, status=200, body=b"OK")

        results = await mail.provider.send_batch(items(3), batch_key="batch_no_ids")

        assert [(r.provider_message_id, r.error) for r in results] == [(None, None)] * 3


class TestRefused:
    # Resend's strict validation refuses the whole batch instead (the next test).
    @pytest.mark.parametrize("mail", [n for n in BATCHING if n != "resend"], indirect=True)
    async def test_one_refused_message_is_its_own_result(self, mail: Harness) -> None:
        batch = items(4)
        refused = batch[2].email.to[0].address
        mail.refuse_recipient(refused, f"Found inactive addresses: {refused}. key {SECRET}")

        results = await mail.provider.send_batch(batch, batch_key="batch_partly")

        errors = [r.error for r in results]
        assert [e is None for e in errors] == [True, True, False, True]
        error = errors[2]
        assert isinstance(error, ProviderRejected)
        assert error.status == 422
        assert f"Found inactive addresses: {refused}" in error.detail
        if isinstance(mail, HttpHarness):  # the provider's own words, scrubbed of the key
            assert SECRET not in error.detail
        assert results[2].provider_message_id is None
        accepted = [r.message_id for r in results if r.error is None]
        assert [r.provider_message_id for r in results if r.error is None] == mail.issued_ids(
            accepted
        )
        assert mail.deliveries() == 3

    @pytest.mark.parametrize("mail", ["resend"], indirect=True)
    async def test_resend_refuses_the_whole_batch_for_one_bad_message(self, mail: Harness) -> None:
        batch = items(4)
        mail.refuse_recipient(batch[1].email.to[0].address, "Invalid `to` field.")

        with pytest.raises(ProviderRejected) as caught:
            await mail.provider.send_batch(batch, batch_key="batch_strict")

        assert caught.value.status == 422
        assert "validation_error: Invalid `to` field." in caught.value.detail
        assert mail.deliveries() == 0

    @scripted
    @pytest.mark.parametrize("status", [400, 401, 422])
    async def test_a_refused_request_is_rejected_as_a_whole(
        self, mail: Harness, status: int
    ) -> None:
        mail.refuse_next(status, "The domain school.example is not verified.")

        with pytest.raises(ProviderRejected) as caught:
            await mail.provider.send_batch(items(min(3, mail.provider.batch_limit)), batch_key="b")

        assert caught.value.status == status
        assert "The domain school.example is not verified." in caught.value.detail


class TestNotNow:
    @pytest.mark.parametrize(
        ("mail", "how"),
        [
            *unavailable_cases(),
            *((RECORDING_BATCHES, how) for how in UNAVAILABLE if how[0].isdigit()),
        ],
        indirect=["mail"],
    )
    async def test_not_now_is_unavailable_with_the_retry_after_asked_for(
        self, mail: Harness, how: str
    ) -> None:
        mail.unavailable_next(how)

        with pytest.raises(ProviderUnavailable) as caught:
            await mail.provider.send_batch(
                items(min(5, mail.provider.batch_limit)), batch_key="batch_later"
            )

        assert caught.value.retry_after == UNAVAILABLE[how]


class TestIdempotency:
    @batching_http
    async def test_the_batch_key_is_the_idempotency_key_where_the_provider_takes_one(
        self, mail: Harness
    ) -> None:
        assert isinstance(mail, HttpHarness)
        await mail.provider.send_batch(items(2), batch_key="batch_key_1")

        [request] = mail.standin.requests
        assert request.header("idempotency-key") == (
            "batch_key_1" if mail.provider.keeps_idempotency else None
        )

    @keeps_keys
    async def test_the_same_key_and_batch_again_gets_the_first_answer_delivered_once(
        self, mail: Harness
    ) -> None:
        batch = items(5)
        first = await mail.provider.send_batch(batch, batch_key="batch_again")

        again = await mail.provider.send_batch(batch, batch_key="batch_again")

        assert again == first
        assert mail.deliveries() == 5

    @keeps_keys
    async def test_after_not_now_the_retry_with_the_same_key_is_delivered_once(
        self, mail: Harness
    ) -> None:
        batch = items(3)
        mail.unavailable_next("503")
        with pytest.raises(ProviderUnavailable):
            await mail.provider.send_batch(batch, batch_key="batch_retry")

        results = await mail.provider.send_batch(batch, batch_key="batch_retry")

        assert all(r.error is None and r.provider_message_id for r in results)
        assert mail.deliveries() == 3

    @pytest.mark.parametrize("mail", [n for n in KEEPS_KEYS if n in HTTP], indirect=True)
    async def test_a_batch_whose_answer_was_lost_is_not_delivered_again_on_retry(
        self, mail: Harness
    ) -> None:
        batch = items(4)
        mail.lose_answer_next()
        with pytest.raises(ProviderUnavailable):  # delivered, but we cannot know
            await mail.provider.send_batch(batch, batch_key="batch_lost")
        assert mail.deliveries() == 4

        results = await mail.provider.send_batch(batch, batch_key="batch_lost")

        assert mail.deliveries() == 4
        assert isinstance(mail, HttpHarness)
        lost, retry = mail.standin.requests
        assert (lost.answer, retry.replayed) == ("lost", True)
        assert [r.provider_message_id for r in results] == list(lost.provider_ids)

    @keeps_keys
    async def test_the_same_key_for_another_batch_is_refused(self, mail: Harness) -> None:
        await mail.provider.send_batch(items(2, "first"), batch_key="batch_reused")

        with pytest.raises(ProviderRejected) as caught:
            await mail.provider.send_batch(items(2, "other"), batch_key="batch_reused")

        assert caught.value.status == 409
        if mail.kind == "resend":
            assert caught.value.detail.startswith("invalid_idempotent_request: ")
        assert mail.deliveries() == 2
