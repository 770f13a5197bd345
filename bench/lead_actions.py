"""Scenario BA: bulk actions on 100,000 leads of one account, on Postgres (issue 27: tagged
in <= 10 s).

The leads go in by COPY (as QS's, tagged ``march``), then ``ANALYZE leads``. Against the
running ``leadmail serve`` (its pgqueuer worker runs the job): add a tag to the segment
``tag=march``, then remove it, then delete the segment, each timed from the POST to the
first GET that finds it done, with the progress it showed on the way (polled every 50
ms). The ceiling, measured in the same run on the same leads: one plain UPDATE of all of
them (the tag appended in SQL, no events, no progress), the least Postgres can do for the
same change; the figure is the action's time over it.

Postgres runs on every core for this scenario (the rest of ``make bench`` pins it to one,
away from the server's): the work measured is Postgres's own, and the job runs two batches
at once, as a deployment's Postgres with its cores would. The ceiling, one statement, uses
one core.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg
import httpx

from bench.common import log
from bench.lead_search import records
from bench.scenarios import ACTIONS_ID
from bench.segments import copy_leads

ACTIONS_TITLE = "bulk actions on 100,000 leads: add_tags, remove_tags, delete"
LEAD_COUNT = 100_000
TARGET_S = 10.0
POLL_S = 0.05


def run_action(url: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        started = time.perf_counter()
        response = client.post("/api/v1/leads/actions", json=body)
        if response.status_code != 202:
            raise RuntimeError(f"{body}: {response.status_code} {response.text}")
        action_id = response.json()["data"]["id"]
        progress: list[int] = []
        while True:
            found = client.get(f"/api/v1/leads/actions/{action_id}").json()["data"]
            if found["status"] == "running" and (not progress or found["done"] > progress[-1]):
                progress.append(found["done"])
            if found["status"] in ("done", "failed"):
                break
            time.sleep(POLL_S)
        took = time.perf_counter() - started
    return {
        "action": body["action"],
        "status": found["status"],
        "total": found["total"],
        "changed": found["changed"],
        "wall_s": round(took, 2),
        "leads_per_s": round(found["done"] / took) if took else None,
        "progress_seen": progress,
    }


async def plain_update(db_url: str, account_id: str) -> float:
    """The ceiling: every tagged lead's tags appended in one statement (rolled back)."""
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        transaction = connection.transaction()
        await transaction.start()
        started = time.perf_counter()
        await connection.execute(
            "UPDATE leads SET tags = tags || ARRAY['ceiling'], updated_at = now()"
            " WHERE account_id = $1 AND tags @> ARRAY['march']",
            account_id,
        )
        took = time.perf_counter() - started
        await transaction.rollback()
    finally:
        await connection.close()
    return took


def run_actions(url: str, key: str, db_url: str, account_id: str) -> dict[str, Any]:
    rows = [
        (row[0].replace("ld_qs", "ld_ba", 1), *row[1:10], ["march"], row[11])
        for row in records(account_id, LEAD_COUNT, seed=28)
    ]
    loaded = asyncio.run(copy_leads(db_url, rows))
    log(f"{ACTIONS_ID}: {loaded['leads']:,} leads copied in {loaded['copy_s']} s")
    ceiling_s = asyncio.run(plain_update(db_url, account_id))
    log(f"{ACTIONS_ID}: ceiling (one plain UPDATE of them all) {ceiling_s:.2f} s")
    runs = []
    for body in (
        {"action": "add_tags", "tags": ["cohort-b"], "filter": {"tag": "march"}},
        {"action": "remove_tags", "tags": ["cohort-b"], "filter": {"tag": "march"}},
        {"action": "delete", "filter": {"tag": "march"}},
    ):
        found = run_action(url, key, body)
        found["over_ceiling"] = round(found["wall_s"] / ceiling_s, 2)
        log(
            f"{ACTIONS_ID} {found['action']}: {found['changed']:,} of {found['total']:,} in"
            f" {found['wall_s']} s ({found['leads_per_s']:,} leads/s,"
            f" {found['over_ceiling']}x the plain UPDATE); progress seen at"
            f" {found['progress_seen']}"
        )
        runs.append(found)
    tagged = runs[0]
    return {
        "id": ACTIONS_ID,
        "title": ACTIONS_TITLE,
        "load": loaded,
        "ceiling_s": round(ceiling_s, 2),
        "target_s": TARGET_S,
        "tag_s": tagged["wall_s"],
        "met": tagged["status"] == "done" and tagged["wall_s"] <= TARGET_S,
        "runs": runs,
    }


def with_actions(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with BA's figures and its check (issue 27's target)."""
    if not found:
        return report
    report["lead_actions"] = found
    report["checks"] += [
        {"id": f"{ACTIONS_ID} add_tags", "title": f"{LEAD_COUNT:,} leads tagged by a bulk"
         " action, request to done", "value": found["tag_s"], "unit": " s",
         "target": f"<= {TARGET_S:g} s", "met": found["met"]},
    ]  # fmt: skip
    return report
