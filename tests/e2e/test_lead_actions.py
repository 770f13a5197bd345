"""Bulk actions through the real ``leadmail serve`` (SQLite and Postgres: there pgqueuer's
worker runs the job) and the real ``leadmail leads tag|untag|delete``: an action's progress
seen moving while it runs, its counts at the end, and the leads as it left them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from leadmail.domain.lead_actions import ACTION_BATCH
from tests.e2e.server import LeadmailServer
from tests.e2e.test_lead_files import finished as finished_import
from tests.e2e.test_lead_files import rows
from tests.support.envelope import ACTIONS, IMPORTS

LEADS_COUNT = ACTION_BATCH * 2 + 2_000  # three batches


def imported(api: httpx.Client, prefix: str, count: int) -> None:
    response = api.post(IMPORTS, content=rows(prefix, count).encode(),
                        params={"tags": "march"}, headers={"Content-Type": "text/csv"})  # fmt: skip
    assert response.status_code == 202, response.text
    done = finished_import(api, response.json()["data"]["id"])
    assert (done["status"], done["created"]) == ("done", count), done


def watched(api: httpx.Client, action_id: str) -> list[dict[str, Any]]:
    """Every state the action was seen in, polled until it finished."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = api.get(f"{ACTIONS}/{action_id}")
        assert found.status_code == 200, found.text
        seen.append(found.json()["data"])
        if seen[-1]["status"] in ("done", "failed"):
            return seen
        time.sleep(0.01)
    raise AssertionError(f"action {action_id} not finished in 120 s: {seen[-1]}")


def count(api: httpx.Client, **params: str) -> int:
    response = api.get("/api/v1/leads/count", params=params)
    assert response.status_code == 200, response.text
    found: int = response.json()["data"]["count"]
    return found


def test_a_tag_action_shows_its_progress_and_tags_exactly_the_segment(
    server: LeadmailServer,
) -> None:
    [key] = server.keys_for("bulk-school")
    with server.client(key.secret) as api:
        imported(api, "bulk", LEADS_COUNT)
        api.post("/api/v1/leads", json={"email": "other@example.com", "name": "Other"})
        dry = api.post(ACTIONS, json={"action": "add_tags", "tags": ["cohort-b"],
                                      "filter": {"tag": "march"}, "dry_run": True})  # fmt: skip
        assert dry.status_code == 200, dry.text
        assert dry.json()["data"]["total"] == LEADS_COUNT

        response = api.post(ACTIONS, json={"action": "add_tags", "tags": ["cohort-b"],
                                           "filter": {"tag": "march"}})  # fmt: skip
        assert response.status_code == 202, response.text
        seen = watched(api, response.json()["data"]["id"])

        done = seen[-1]
        assert done["status"] == "done", done
        assert (done["total"], done["done"], done["left"], done["changed"]) == (
            LEADS_COUNT, LEADS_COUNT, 0, LEADS_COUNT,
        )  # fmt: skip
        # Seen part way: counts that only grow, with the time left while it ran.
        dones = [state["done"] for state in seen]
        assert dones == sorted(dones)
        part_way = [s for s in seen if s["status"] == "running" and 0 < s["done"] < LEADS_COUNT]
        assert part_way, [(s["status"], s["done"]) for s in seen]
        assert all(s["left"] == LEADS_COUNT - s["done"] for s in part_way)
        assert all(isinstance(s["eta_seconds"], int) for s in part_way)
        assert count(api, tag="cohort-b") == LEADS_COUNT
        assert count(api) == LEADS_COUNT + 1


def test_the_commands_untag_and_delete_with_a_progress_bar(
    server: LeadmailServer, tmp_path: Path
) -> None:
    [key] = server.keys_for("bulk-cli")
    with server.client(key.secret) as api:
        imported(api, "cli", 1_500)
        kept = api.post("/api/v1/leads", json={"email": "kept@example.com", "name": "Kept",
                                               "tags": ["march", "alumni"]})  # fmt: skip
        assert kept.status_code == 200, kept.text

    untag = server.cli("leads", "untag", "--account", key.account, "--filter",
                       '{"tag": "alumni"}', "--tags", "march")  # fmt: skip
    assert untag.returncode == 0, untag.describe()
    assert "1 of 1 leads: 1 changed, 0 skipped, 0 failed." in untag.stdout
    dry = server.cli("leads", "delete", "--account", key.account, "--filter", '{"tag": "march"}',
                     "--dry-run")  # fmt: skip
    assert dry.returncode == 0, dry.describe()
    assert "would touch 1500 leads; nothing done" in dry.stdout
    unconfirmed = server.cli("leads", "delete", "--account", key.account, "--filter", "{}")
    assert unconfirmed.returncode == 2, unconfirmed.describe()
    assert "--yes" in unconfirmed.stderr

    deleted = server.cli("leads", "delete", "--account", key.account, "--filter",
                         '{"tag": "march"}', "--yes")  # fmt: skip

    assert deleted.returncode == 0, deleted.describe()
    assert "(delete): done; 1500 of 1500 leads: 1500 changed" in deleted.stdout
    assert " leads" in deleted.stderr  # the progress bar
    assert "Traceback" not in deleted.stderr
    with server.client(key.secret) as api:
        assert count(api) == 1
        assert count(api, tag="alumni") == 1
