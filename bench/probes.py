"""The requests the driver sends before measuring: the leads that the scenarios with
``{id}`` in their path update, and one probe request per scenario, which must be answered
200 for the scenario to be measured."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import httpx

from bench.common import log
from bench.scenarios import PUT_LEADS, Scenario, lead_body
from bench.servers import Server


def lead_ids_file(server: Server, key: str, tmp: Path) -> tuple[Path, str]:
    """PUT_LEADS leads created through ``server``: the file of their ids that the wrk
    script reads, and the first id."""
    lead_ids = create_leads(server, key, PUT_LEADS, secrets.token_hex(4))
    path = tmp / "lead_ids.txt"
    path.write_text("\n".join(lead_ids) + "\n")
    log(f"created {len(lead_ids)} leads for the PUT scenario")
    return path, lead_ids[0]


def create_leads(server: Server, key: str, count: int, run_id: str) -> list[str]:
    async def create() -> list[str]:
        limits = httpx.Limits(max_connections=16)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(
            base_url=server.url, headers=headers, limits=limits, timeout=30
        ) as client:
            slots = asyncio.Semaphore(16)

            async def one(i: int) -> str:
                async with slots:
                    response = await client.post(
                        "/api/v1/leads", json=lead_body(f"put-{run_id}-{i}")
                    )
                response.raise_for_status()
                return str(response.json()["data"]["lead_id"])

            return await asyncio.gather(*(one(i) for i in range(count)))

    return asyncio.run(create())


def probe(scenario: Scenario, server: Server, key: str, lead_id: str) -> str | None:
    """One request shaped like the scenario's: None if it is answered 200, else why not."""
    path = scenario.path.replace("{id}", lead_id)
    body = scenario.probe_body(f"probe-{secrets.token_hex(4)}") if scenario.probe_body else None
    try:
        response = httpx.request(
            scenario.method,
            server.url + path,
            json=body,
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
    except httpx.HTTPError as e:
        return f"{scenario.method} {path}: {e!r}"
    if response.status_code != 200:
        return f"{scenario.method} {path} answered {response.status_code}: {response.text[:500]}"
    return None
