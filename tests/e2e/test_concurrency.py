"""Many clients at once against the embedded default: SQLite must queue, never fail."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx

from tests.e2e.names import new_email, new_name
from tests.e2e.server import LeadmailServer
from tests.support.envelope import LEADS, ok_data

CLIENTS = 50


async def test_fifty_concurrent_clients_all_get_their_lead_stored(
    sqlite_server: LeadmailServer,
) -> None:
    [key] = sqlite_server.create_keys(new_name("busy-school"))
    emails = [new_email(f"rush-{n}") for n in range(CLIENTS)]
    start = asyncio.Event()

    async def one_client(number: int) -> httpx.Response:
        # A client of its own (its own connection) per lead, all released at once.
        async with sqlite_server.async_client(key.secret) as client:
            await start.wait()
            return await client.post(
                LEADS, json={"name": f"Student {number}", "email": emails[number]}
            )

    tasks = [asyncio.create_task(one_client(n)) for n in range(CLIENTS)]
    await asyncio.sleep(0)
    start.set()
    responses = await asyncio.gather(*tasks)

    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: CLIENTS}, {
        status: [r.text for r in responses if r.status_code == status][:3] for status in statuses
    }
    stored = {ok_data(r)["email"] for r in responses}
    assert stored == set(emails)

    async with sqlite_server.async_client(key.secret) as client:
        page = ok_data(await client.get(LEADS, params={"limit": 100}))
    assert len(page["items"]) == CLIENTS
    assert {item["email"] for item in page["items"]} == set(emails)
    assert len({item["lead_id"] for item in page["items"]}) == CLIENTS
