"""Issue 25's figure: a burst of 1,000 signed provider events, 8 at a time, answered within
10 s by ``leadmail serve`` on Postgres, each applied exactly once.

250 messages are sent through the Resend stand-in (five template sends of 50), then four
Resend events about each (deferred, delivered, opened, clicked: 1,000 events, each its own
request with its own svix-id) are posted in a shuffled order by 8 concurrent clients and
timed from the first request to the last answer. Every message must then show exactly its
four events and the status ``delivered``; the whole burst posted again must change nothing
(1,000 duplicates). The time is printed (``-s`` not needed).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.mail import SENDER, EmailRig, email_rig
from tests.e2e.names import new_email
from tests.postgres import fresh_database
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import MESSAGES, TEMPLATE, ok_data
from tests.support.webhooks import ProviderSecrets

pytestmark = pytest.mark.postgres

MESSAGE_COUNT = 250
KINDS = ("email.delivery_delayed", "email.delivered", "email.opened", "email.clicked")
CONCURRENCY = 8
CEILING_S = 10.0
SECRETS = ProviderSecrets.fresh()


@pytest.fixture(scope="module")
async def burst_database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(scope="module")
def rig(burst_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmailRig]:
    workdir = tmp_path_factory.mktemp("webhook-burst")
    settings = {name.removeprefix("LEADMAIL_"): value for name, value in SECRETS.env().items()}
    with email_rig(
        "resend", burst_database, workdir, name="burst", EMAIL_RATE="0", **settings
    ) as running:
        yield running


def sent_messages(rig: EmailRig) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    with rig.client() as api:
        for _ in range(MESSAGE_COUNT // 50):
            body = {
                "to": [new_email("burst") for _ in range(50)],
                "template_id": "welcome",
                "variables": WELCOME_VARIABLES,
                "from": SENDER,
            }
            messages += ok_data(api.post(TEMPLATE, json=body, timeout=60))["messages"]
    assert len(messages) == MESSAGE_COUNT
    assert all(m["status"] == "sent" and m["provider_message_id"] for m in messages)
    return messages


def resend_event(kind: str, message: dict[str, Any], n: int) -> dict[str, Any]:
    at = f"2026-11-26T10:00:{n:02d}.000Z"  # the four in their order, a second apart
    data: dict[str, Any] = {
        "email_id": message["provider_message_id"],
        "created_at": at,
        "from": SENDER,
        "to": message["to"],
        "subject": "Welcome",
    }
    if kind == "email.clicked":
        data["click"] = {"ipAddress": "192.0.2.1", "link": "https://example.com/courses",
                         "timestamp": at, "userAgent": "Mozilla/5.0"}  # fmt: skip
    return {"type": kind, "created_at": at, "data": data}


async def post_all(
    client: httpx.AsyncClient, requests: list[tuple[bytes, dict[str, str]]]
) -> tuple[float, list[dict[str, int]]]:
    """Post every request, CONCURRENCY at a time; the seconds from the first request to
    the last answer, and each answer's data."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(body: bytes, headers: dict[str, str]) -> dict[str, int]:
        async with gate:
            response = await client.post("/api/v1/webhooks/resend", content=body, headers=headers)
        data: dict[str, int] = ok_data(response)
        return data

    started = time.perf_counter()
    answers = await asyncio.gather(*(one(body, headers) for body, headers in requests))
    return time.perf_counter() - started, list(answers)


async def test_a_burst_of_1000_signed_events_is_answered_within_10_s_and_applied_once(
    rig: EmailRig, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = await asyncio.to_thread(sent_messages, rig)
    requests = [
        SECRETS.signed("resend", resend_event(kind, message, n))
        for message in messages
        for n, kind in enumerate(KINDS)
    ]
    random.Random(25).shuffle(requests)
    assert len(requests) == 1000
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(
        base_url=rig.server.base_url, timeout=30.0, limits=limits
    ) as client:
        seconds, answers = await post_all(client, requests)
        replay_seconds, replays = await post_all(client, requests)

    with capsys.disabled():
        print(
            f"\nwebhook burst on Postgres: 1,000 signed events, {CONCURRENCY} at a time, in"
            f" {seconds:.2f} s ({1000 / seconds:.0f}/s); the same 1,000 again (duplicates) in"
            f" {replay_seconds:.2f} s"
        )
    assert sum(a["applied"] for a in answers) == 1000
    assert sum(a["duplicates"] + a["unknown"] + a["ignored"] for a in answers) == 0
    assert sum(a["duplicates"] for a in replays) == 1000
    assert sum(a["applied"] for a in replays) == 0
    assert seconds <= CEILING_S, f"{seconds:.2f} s for the burst"

    with rig.client() as api:
        for message in messages:
            shown = ok_data(api.get(f"{MESSAGES}/{message['id']}"))
            assert shown["status"] == "delivered", shown
            assert [e["type"] for e in shown["events"]] == [
                "deferred", "delivered", "opened", "clicked"
            ], shown  # fmt: skip
