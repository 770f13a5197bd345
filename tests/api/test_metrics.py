"""GET /metrics in process: Prometheus's text format, no API key, the request and provider
figures, the storage's figures read at the scrape; the token when one is set."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from leadmail.adapters.mail.metrics import MeteredEmailProvider
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.bootstrap import Adapters
from leadmail.config import Settings
from tests.api.support import Api, open_api, plain_email
from tests.support.envelope import LEADS, SEND, assert_error


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition ``text`` (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))  # as written
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") + r" (\S+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@pytest.fixture
async def metered() -> AsyncIterator[Api]:
    provider = MeteredEmailProvider(RecordingEmailProvider("metered"))
    async with open_api(Adapters.in_memory(provider)) as opened:
        yield opened


async def scrape(api: Api, headers: dict[str, str] | None = None) -> str:
    answer = await api.client.get("/metrics", headers=headers or {})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return answer.text


async def test_requests_and_messages_are_counted_without_a_key(metered: Api) -> None:
    before = await scrape(metered)
    route = {"route": "/api/v1/leads", "method": "GET", "status": "200"}
    sent = {"provider": "metered", "outcome": "accepted"}

    for _ in range(3):
        assert (await metered.client.get(LEADS, headers=metered.auth)).status_code == 200
    assert (
        await metered.client.post(SEND, json=plain_email(), headers=metered.auth)
    ).status_code == 200
    after = await scrape(metered)

    assert (
        sample(after, "leadmail_http_requests_total", **route)
        - sample(before, "leadmail_http_requests_total", **route)
        == 3
    )
    assert (
        sample(after, "leadmail_messages_total", **sent)
        - sample(before, "leadmail_messages_total", **sent)
        == 1
    )
    assert "leadmail_http_request_duration_seconds_bucket" in after
    assert (
        sample(after, "leadmail_provider_request_duration_seconds_count", provider="metered") >= 1
    )
    assert "leadmail_campaign_recipients_pending 0.0" in after
    assert "leadmail_jobs_queued" in after


async def test_the_token_is_asked_for_when_set() -> None:
    async with open_api(
        settings=Settings(migrate_on_start=False, metrics_token="s3cret-token")
    ) as api:
        missing = await api.client.get("/metrics")
        wrong = await api.client.get("/metrics", headers={"Authorization": "Bearer nope"})
        key = await api.client.get("/metrics", headers=api.auth)  # an API key is not it
        right = await scrape(api, {"Authorization": "Bearer s3cret-token"})

    for refused in (missing, wrong, key):
        assert_error(refused, 401, "UNAUTHORIZED")
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert "leadmail_http_requests_total" in right
