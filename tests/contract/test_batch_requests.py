"""The batch dialects' requests and answers, held against the providers' own published
API descriptions (as test_provider_requests.py does for single messages): Resend's
``POST /emails/batch`` and Postmark's ``POST /email/batch``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from leadmail.adapters.mail.dialects.base import ProviderRequest
from leadmail.adapters.mail.providers import DIALECTS
from leadmail.domain.delivery import BatchItem
from leadmail.domain.email import OutgoingEmail
from tests.contract.test_provider_requests import (  # noqa: F401 (an autouse fixture)
    MESSAGES,
    _descriptions_present,
    api_key_for,
    dialect,
    load_spec,
    read_headers,
    read_message,
    read_reply_to,
    undeclared,
)
from tests.support.standin import Provider, RecordedRequest, batch_answer
from tests.support.standin_batches import BatchEndpoints

BATCHING: list[Provider] = ["resend", "postmark"]
# A batch key as a campaign's sender makes one: its batch id (well under Resend's 256).
BATCH_KEY = "cb_4Qx7c2VtYmxlZC1iYXRjaC1pZA"


def batch_of(emails: list[OutgoingEmail]) -> list[BatchItem]:
    return [BatchItem(email, f"msg_{i:04}") for i, email in enumerate(emails)]


SAMPLES = {
    "every sample message": batch_of(list(MESSAGES.values())),
    "the most messages": batch_of([MESSAGES["non-ascii"]] * DIALECTS["resend"].max_batch),
}


def build(provider: Provider, items: list[BatchItem]) -> ProviderRequest:
    return dialect(provider).build_batch(items, BATCH_KEY)


def test_exactly_the_providers_with_a_batch_endpoint_batch() -> None:
    assert [name for name, d in DIALECTS.items() if d.max_batch > 1] == BATCHING
    assert {n: (d.max_batch, d.default_rate) for n, d in DIALECTS.items()} == {
        "resend": (100, 2.0),
        "postmark": (500, 0.0),
        "sendgrid": (1, 0.0),
        "mailgun": (1, 0.0),
        "mailpit": (1, 0.0),
    }
    # Resend's description says its limit in the operation's summary.
    spec = load_spec("resend")
    operation, _ = spec.operation("/emails/batch", "POST")
    assert "up to 100 " in spec.at(operation)["summary"]


@pytest.mark.parametrize("provider", BATCHING)
@pytest.mark.parametrize("sample", SAMPLES)
def test_the_batch_validates_against_the_published_schema(provider: Provider, sample: str) -> None:
    spec = load_spec(provider)
    request = build(provider, SAMPLES[sample])
    operation, parameters = spec.operation(request.path, request.method)
    media_type, schema = spec.body_schema(operation)

    assert (request.method, request.path, parameters) == (
        "POST",
        {"resend": "/emails/batch", "postmark": "/email/batch"}[provider],
        {},
    )
    assert media_type == "application/json"
    assert request.json is None
    assert not request.form
    body = request.json_array
    assert body is not None
    assert len(body) == len(SAMPLES[sample])
    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in spec.validator(schema).iter_errors(body)
    ]
    assert errors == []
    assert undeclared(spec, body, schema) == []


@pytest.mark.parametrize("provider", BATCHING)
def test_each_message_of_the_batch_is_the_single_messages_body(provider: Provider) -> None:
    items = SAMPLES["every sample message"]
    request = build(provider, items)
    assert request.json_array is not None

    for item, body in zip(items, request.json_array, strict=True):
        single = dialect(provider).build(item.email, item.message_id)
        assert body == single.json
        as_read = read_message(provider, ProviderRequest("POST", request.path, json=body))
        assert as_read == (
            (item.email.sender.name, item.email.sender.address),
            [(b.name, b.address) for b in item.email.to],
            item.email.subject,
            item.email.html,
        )


@pytest.mark.parametrize("provider", BATCHING)
def test_each_messages_own_mail_headers_go_with_it(provider: Provider) -> None:
    items = SAMPLES["every sample message"]
    request = build(provider, items)
    assert request.json_array is not None

    for item, body in zip(items, request.json_array, strict=True):
        carried = read_headers(provider, ProviderRequest("POST", request.path, json=body))
        assert carried == list(item.email.headers)
    assert any(item.email.headers for item in items)


@pytest.mark.parametrize("provider", BATCHING)
def test_every_described_header_parameter_is_sent_and_valid(provider: Provider) -> None:
    spec = load_spec(provider)
    subject = dialect(provider)
    request = build(provider, SAMPLES["every sample message"])
    operation, _ = spec.operation(request.path, request.method)
    auth = subject.auth_headers(api_key_for(provider))
    sent = {k.lower(): v for k, v in {**request.headers, **auth}.items()}

    described = spec.header_parameters(operation)
    for name, (required, schema) in described.items():
        if required:
            assert name in sent, f"{name} is required by the description"
        if name in sent:
            assert list(spec.validator(schema).iter_errors(sent[name])) == []
    if provider == "resend":  # the batch's key, the described header
        assert request.headers["Idempotency-Key"] == BATCH_KEY
        assert "idempotency-key" in described
    else:  # Postmark takes no idempotency key: none is sent
        assert "idempotency-key" not in sent
        assert sent["x-postmark-server-token"] == api_key_for(provider)


def recorded(provider: Provider, items: list[BatchItem]) -> RecordedRequest:
    request = build(provider, items)
    headers = tuple((k.lower(), v) for k, v in request.headers.items())
    return RecordedRequest(
        "POST", request.path, headers, json.dumps(request.json_array).encode(), provider
    )


def documented(provider: Provider, answer_status: int, body: Any) -> list[str]:
    spec = load_spec(provider)
    operation, _ = spec.operation(
        {"resend": "/emails/batch", "postmark": "/email/batch"}[provider], "POST"
    )
    schema = spec.response_schema(operation, answer_status)
    assert schema is not None
    return [e.message for e in spec.validator(schema).iter_errors(body)]


@pytest.mark.parametrize("provider", BATCHING)
def test_an_accepted_batch_answer_matches_the_description_and_yields_the_ids(
    provider: Provider,
) -> None:
    items = SAMPLES["every sample message"]
    answer = batch_answer(provider, recorded(provider, items), BatchEndpoints())

    assert answer.status == 200
    assert documented(provider, 200, json.loads(answer.body)) == []
    read = dialect(provider).batch_answers(200, dict(answer.headers), answer.body, len(items))
    assert [a.provider_id for a in read] == list(answer.provider_ids)
    assert len(set(answer.provider_ids)) == len(items)
    assert all(a.refused == 0 and a.error == "" for a in read)


def test_a_postmark_batch_with_a_refused_message_matches_the_description() -> None:
    items = SAMPLES["every sample message"]
    endpoints = BatchEndpoints()
    endpoints.refuse("grace@example.net", "Found inactive addresses: grace@example.net.")
    answer = batch_answer("postmark", recorded("postmark", items), endpoints)

    assert answer.status == 200  # 200 even when some are refused
    body = json.loads(answer.body)
    assert documented("postmark", 200, body) == []
    read = dialect("postmark").batch_answers(200, dict(answer.headers), answer.body, len(items))
    refused = [i for i, a in enumerate(read) if a.refused]
    assert refused == [1]  # "several named" has grace@example.net among its recipients
    assert body[1] == {"ErrorCode": 406, "Message": "Found inactive addresses: grace@example.net."}
    assert read[1].refused == 422
    assert read[1].error == "Found inactive addresses: grace@example.net. (ErrorCode 406)"
    assert [a.provider_id for a in read if not a.refused] == list(answer.provider_ids)


@pytest.mark.parametrize("provider", BATCHING)
@pytest.mark.parametrize(
    "body", [b"", b"OK", b"[]", b"{}", b'{"data": [{"id": 7}]}', b'[{"ErrorCode": 0}]']
)
def test_an_accepted_answer_that_cannot_be_read_leaves_every_id_unknown(
    provider: Provider, body: bytes
) -> None:
    read = dialect(provider).batch_answers(200, {}, body, 3)

    assert [(a.provider_id, a.refused) for a in read] == [(None, 0)] * 3


@pytest.mark.parametrize("provider", BATCHING)
def test_an_answer_with_more_entries_than_messages_is_cut_to_them(provider: Provider) -> None:
    items = SAMPLES["every sample message"]
    answer = batch_answer(provider, recorded(provider, items), BatchEndpoints())

    read = dialect(provider).batch_answers(200, {}, answer.body, 2)

    assert [a.provider_id for a in read] == list(answer.provider_ids[:2])


@pytest.mark.parametrize("provider", BATCHING)
def test_each_message_of_a_batch_carries_its_reply_to(provider: Provider) -> None:
    emails = [MESSAGES["with a reply-to"], MESSAGES["one recipient"]]
    request = build(provider, batch_of(emails))

    assert request.json_array is not None
    replies = [
        read_reply_to(provider, ProviderRequest("POST", "", json=m)) for m in request.json_array
    ]
    assert replies == [[("Admissions Office", "admissions@school.example")], []]
