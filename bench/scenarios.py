"""What the benchmark runs, as data: the wrk scenarios and the bodies they send, and the
ids of the runs that are not wrk's (pgbench, the 1,000 emails, instructions per request).

To add a wrk scenario: one ``Scenario`` in SCENARIOS, naming a script of bench/wrk/ (a new
one only if no script there sends the right request) and, if it sends a body, a function
making one like it, for the probe request that checks the scenario before it is measured.
The driver, the table and the JSON take it from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

SENDER = "Bench Academy <hello@bench.example.com>"
TEMPLATE_ID = "welcome"
# The bench account's own copy of it (issue 26: an account's template costs what a
# predefined one does): same subject and HTML, sent as written (inline_css false).
OWN_TEMPLATE_ID = "welcome-own"
TEMPLATE_VARIABLES = {
    "first_name": "friend",
    "school_name": "Bench Academy",
    "courses_link": "https://bench.example.com/courses",
    "contact_email": "hello@bench.example.com",
}
RECIPIENTS = 50  # per template request (bench/wrk/email_template.lua agrees)
BATCH_REQUESTS = 20  # x RECIPIENTS = the 1,000 template emails
PUT_LEADS = 1000  # leads created up front for the scenarios whose path has {id}
BULK_MIN_DURATION_S = 8


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    server: str  # a key of bench.servers.build_servers' answer
    method: str
    path: str  # "{id}": one of PUT_LEADS leads created first, round-robin
    script: str  # in bench/wrk/
    probe_body: Callable[[str], dict[str, Any]] | None = None
    # A bulk send holds RECIPIENTS delivery slots per request: it runs with
    # --bulk-connections, and at least BULK_MIN_DURATION_S so that requests complete.
    bulk: bool = False


# The bodies, from a token that makes each one's addresses unique. The wrk scripts write
# the same fields; lead_body is also what bench.instructions sends.


def lead_body(token: str) -> dict[str, Any]:
    return {
        "name": "Bench Lead",
        "email": f"lead-{token}@example.com",
        "source": "bench",
        "note": "Asked about evening classes",
    }


def send_body(token: str) -> dict[str, Any]:
    return {
        "to": f"Bench Student <student-{token}@example.com>",
        "from": SENDER,
        "subject": "Your place is saved",
        "html": "<p>See you on Monday!</p>",
    }


def template_body(token: str) -> dict[str, Any]:
    return {
        "to": [f"student-{token}-{i}@example.com" for i in range(1, RECIPIENTS + 1)],
        "template_id": TEMPLATE_ID,
        "from": SENDER,
        "variables": TEMPLATE_VARIABLES,
    }


def own_template_body(token: str) -> dict[str, Any]:
    return {**template_body(token), "template_id": OWN_TEMPLATE_ID}


def note_body(token: str) -> dict[str, Any]:
    return {"note": f"Updated {token}"}


# Measured in this order, round after round.
SCENARIOS = [
    Scenario("1", "ceiling A: bare Litestar, POST JSON", "ceiling_a", "POST", "/echo",
             "lead_post.lua", lead_body),
    Scenario("1g", "ceiling A: bare Litestar, GET JSON", "ceiling_a", "GET", "/hello",
             "get.lua"),
    Scenario("2", "ceiling B: bare Litestar + asyncpg INSERT", "ceiling_b", "POST", "/leads",
             "lead_post.lua", lead_body),
    Scenario("3", "POST /api/v1/leads", "leadmail", "POST", "/api/v1/leads",
             "lead_post.lua", lead_body),
    Scenario("4", "PUT /api/v1/leads/{id}", "leadmail", "PUT", "/api/v1/leads/{id}",
             "lead_put.lua", note_body),
    Scenario("5", "GET /api/v1/email/templates", "leadmail", "GET",
             "/api/v1/email/templates", "get.lua"),
    Scenario("C", "ceiling C: INSERT, httpx POST, UPDATE", "ceiling_c", "POST", "/send",
             "email_send.lua", send_body),
    Scenario("6", "POST /api/v1/email/send", "leadmail", "POST", "/api/v1/email/send",
             "email_send.lua", send_body),
    Scenario("7", "POST /api/v1/email/template x50", "leadmail", "POST",
             "/api/v1/email/template", "email_template.lua", template_body, bulk=True),
    Scenario("7a", "POST /api/v1/email/template x50, own template", "leadmail", "POST",
             "/api/v1/email/template", "email_template_own.lua", own_template_body, bulk=True),
    Scenario("8", "peer: FastAPI+SQLAlchemy POST /leads", "peer", "POST", "/api/v1/leads",
             "lead_post.lua", lead_body),
]  # fmt: skip

PGBENCH_ID = "9"
PGBENCH_TITLE = "pgbench: one-row INSERT, 8 clients"
PGBENCH_SCRIPT = "bench/pgbench/insert.sql"  # the same one-row insert into leads
PGBENCH_ARGS = ["-n", "-M", "prepared", "-c", "8", "-j", "2"]
BATCH_ID = "E"  # the 1,000 template emails
INSTR_ID = "I"  # instructions per request (callgrind): POST /leads (B, ours), send (C, ours)
SEGMENT_ID = "T"  # tag filters at 100,000 leads (bench/segments.py)
IMPORT_ID = "IM"  # a 100,000-row CSV import (bench/lead_files.py)
EXPORT_ID = "EX"  # the CSV export of 100,000 leads
LONG_ROWS_ID = "LR"  # CSV imports of rows of megabytes (bench/long_rows.py)
MESSAGE_LOG_ID = "ML"  # the message log at 1,000,000 messages (bench/message_log.py)
SEARCH_ID = "QS"  # a lead search at 1,000,000 leads (bench/lead_search.py)
ACTIONS_ID = "BA"  # bulk actions on 100,000 leads (bench/lead_actions.py)
RETENTION_ID = "RP"  # the retention purge of 200,000 messages (bench/retention.py)
DASHBOARD_ID = "DP"  # every dashboard page at 100,000 leads (bench/dashboard_pages.py)
# Campaigns, each on its database (bench/campaigns.py).
CAMPAIGN_IDS = ("K1", "K2", "K3", "K4", "K5", "K1a", "K2a")
IDS = frozenset(
    {s.id for s in SCENARIOS}
    | {PGBENCH_ID, BATCH_ID, INSTR_ID, SEGMENT_ID, IMPORT_ID, EXPORT_ID, LONG_ROWS_ID}
    | {MESSAGE_LOG_ID, SEARCH_ID, ACTIONS_ID, RETENTION_ID, DASHBOARD_ID}
    | set(CAMPAIGN_IDS)
)
FILE_IDS = (IMPORT_ID, EXPORT_ID)
# Besides the wrk scenarios, what needs leadmail serve: the emails, T, IM, EX, LR, ML, QS.
LEADMAIL_EXTRAS = (
    BATCH_ID,
    SEGMENT_ID,
    IMPORT_ID,
    EXPORT_ID,
    LONG_ROWS_ID,
    MESSAGE_LOG_ID,
    SEARCH_ID,
    ACTIONS_ID,
)


def own_template(base_url: str, key: str) -> None:
    """The account's own copy of TEMPLATE_ID, as OWN_TEMPLATE_ID (created once: a copy
    there already is kept)."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
        found = client.get(f"/api/v1/email/templates/{OWN_TEMPLATE_ID}")
        if found.status_code == 200:
            return
        predefined = client.get(f"/api/v1/email/templates/{TEMPLATE_ID}")
        predefined.raise_for_status()
        welcome = predefined.json()["data"]
        body = {
            "id": OWN_TEMPLATE_ID,
            "name": f"{welcome['name']} (own copy)",
            "subject": welcome["subject"],
            "html": welcome["body"],
            "inline_css": False,
        }
        made = client.post("/api/v1/email/templates", json=body)
        if made.status_code != 201:
            raise RuntimeError(f"the own template: {made.status_code} {made.text[:500]}")
