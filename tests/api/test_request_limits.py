"""Request budgets in process: each key's own, the RateLimit headers on what is answered,
429 RATE_LIMITED over it with nothing done; the unsubscribe pages per client address; no
budget on /health, /ready, the document or the providers' webhooks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from leadmail.adapters.limits.requests import request_limiter_from
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.bootstrap import Adapters
from leadmail.ports.request_limits import RequestLimiter
from tests.api.support import Api, account_auth, open_api
from tests.api.test_unsubscribe_pages import link_path
from tests.api.test_webhooks import payload_for, sent_message, webhook_settings
from tests.api.test_webhooks import post as post_webhook
from tests.support.envelope import LEADS, assert_error

BUDGET = 3


def budget(per_minute: int = BUDGET) -> RequestLimiter:
    limiter = request_limiter_from("", per_minute, "test")
    assert limiter is not None
    return limiter


@pytest.fixture
async def limited() -> AsyncIterator[Api]:
    """An app whose keys have BUDGET requests a minute, and client addresses too on the
    unsubscribe pages; the providers' webhooks on."""
    adapters = Adapters.in_memory()
    adapters.key_budget = budget()
    adapters.client_budget = budget()
    async with open_api(adapters, webhook_settings()) as opened:
        yield opened


def budget_headers(response: Any) -> tuple[str, str, str]:
    h = response.headers
    return h["ratelimit-limit"], h["ratelimit-remaining"], h["ratelimit-reset"]


async def test_a_key_is_served_its_budget_then_refused_with_nothing_done(limited: Api) -> None:
    answers = [
        await limited.client.post(
            LEADS, json={"name": f"Lead {n}", "email": f"l{n}@example.com"}, headers=limited.auth
        )
        for n in range(BUDGET + 1)
    ]

    assert [a.status_code for a in answers] == [200] * BUDGET + [429]
    assert [budget_headers(a)[:2] for a in answers] == [
        ("3", "2"), ("3", "1"), ("3", "0"), ("3", "0"),
    ]  # fmt: skip
    refused = assert_error(answers[-1], 429, "RATE_LIMITED")
    assert refused["message"] == "Too many requests"
    assert refused["error"].startswith("More than 3 requests a minute for this API key; retry in")
    retry_after = int(answers[-1].headers["retry-after"])
    assert 1 <= retry_after <= 60
    assert 0 < int(budget_headers(answers[-1])[2]) <= 60
    # Nothing was done: the refused lead is not stored.
    leads = limited.adapters.leads
    assert isinstance(leads, MemoryLeadRepository)
    stored = {lead.email for lead in leads.all_of(limited.account_id)}
    assert stored == {f"l{n}@example.com" for n in range(BUDGET)}


async def test_each_key_has_its_own_budget(limited: Api) -> None:
    other = await account_auth(limited, "acc_other_school")
    for _ in range(BUDGET):
        assert (await limited.client.get(LEADS, headers=limited.auth)).status_code == 200
    assert (await limited.client.get(LEADS, headers=limited.auth)).status_code == 429

    answer = await limited.client.get(LEADS, headers=other)

    assert answer.status_code == 200
    assert budget_headers(answer)[1] == "2"


async def test_client_errors_count_and_carry_the_headers_but_a_401_does_not(limited: Api) -> None:
    refused = await limited.client.get(LEADS, params={"colour": "red"}, headers=limited.auth)
    unknown_key = await limited.client.get(LEADS, headers={"Authorization": "Bearer lm_nope"})

    assert refused.status_code == 422
    assert budget_headers(refused)[1] == "2"
    assert unknown_key.status_code == 401
    assert "ratelimit-limit" not in unknown_key.headers


async def test_probes_the_document_and_webhooks_are_not_counted(limited: Api) -> None:
    message = await sent_message(limited, "resend")
    payload = payload_for("resend", "delivered", message)
    for _ in range(BUDGET + 2):
        for path in ("/health", "/ready", "/schema/openapi.json"):
            answer = await limited.client.get(path)
            assert answer.status_code == 200, path
            assert "ratelimit-limit" not in answer.headers
        hook = await post_webhook(limited, "resend", payload)
        assert hook.status_code == 200, hook.text
        assert "ratelimit-limit" not in hook.headers


async def test_the_unsubscribe_pages_have_a_budget_per_client_address(limited: Api) -> None:
    path = await link_path(limited, "ada@example.com")

    answers = [await limited.client.get(path) for _ in range(BUDGET + 1)]

    assert [a.status_code for a in answers] == [200] * BUDGET + [429]
    assert budget_headers(answers[0])[:2] == ("3", "2")
    assert_error(answers[-1], 429, "RATE_LIMITED")
    assert "from your address" in answers[-1].json()["error"]
    # The API's budget is the key's, not the address's.
    assert (await limited.client.get(LEADS, headers=limited.auth)).status_code == 200


async def test_no_budget_no_headers() -> None:
    async with open_api() as api:
        answer = await api.client.get(LEADS, headers=api.auth)

    assert answer.status_code == 200
    assert "ratelimit-limit" not in answer.headers
