"""Scenario DP: every dashboard page (issue 29) on Postgres, in an account of 100,000 leads
and 1,000 campaigns, in a database of its own: each must answer in <= 100 ms.

The rows go in by COPY, as the service writes them: 100,000 leads made over the last 60
days (a tag of ten, a source of four, a custom field), 1,000 finished campaigns of 100
recipients each over the same days, their 100,000 messages over the last 30 days (one
recipient each, with its message_addresses row; 90 % delivered, 5 % sent, 2 % bounced,
1 % complained, 2 % failed), 2,000 suppressions; then ``ANALYZE``. A user is made with
`leadmail users create`, its password set through its link, and it signs in as a browser
does (the form's CSRF token, the session cookie). Then, against the running
``leadmail serve``, one client asks each page 5 times to warm up and REQUESTS times more,
one request at a time; the figure is each page's p95, measured at the client on loopback
(the server's own time is less).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from bench.common import BIN, ROOT, log
from bench.database import account_with_key, fresh_database, leadmail_cli
from bench.scenarios import DASHBOARD_ID

DASHBOARD_TITLE = "dashboard pages at 100,000 leads and 1,000 campaigns"
LEADS = 100_000
CAMPAIGNS = 1_000
RECIPIENTS = 100  # a campaign
SUPPRESSIONS = 2_000
TARGET_P95_MS = 100.0
WARMUP = 5
REQUESTS = 50
ACCOUNT = "bench-dashboard"
EMAIL = "staff@bench.example.com"
PASSWORD = "a long enough bench password"
_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')
_LINK = re.compile(r"^http://\S+(/app/password/\S+)$", re.MULTILINE)
_NEXT = re.compile(r'rel="next" href="([^"]+)"')
STATUSES = ["delivered"] * 90 + ["sent"] * 5 + ["bounced"] * 2 + ["complained", "failed", "failed"]
REASONS = ["unsubscribed", "bounced", "complained", "manual"]


def _rows(account_id: str, now: datetime) -> dict[str, list[tuple[Any, ...]]]:
    rows: dict[str, list[tuple[Any, ...]]] = {
        "leads": [], "campaigns": [], "campaign_recipients": [], "messages": [],
        "message_addresses": [], "suppressions": [],
    }  # fmt: skip
    span = timedelta(days=60)
    for n in range(LEADS):
        at = now - span + span * n / LEADS
        email = f"lead-{n}@bench.example.com"
        rows["leads"].append((f"ld_dp{n:09}", account_id, f"Lead {n}", email, email,
                              ["fair", "web", "referral", "ads"][n % 4], "", at, at, "",
                              [f"t{n % 10}"], json.dumps({"city": f"city-{n % 50}"})))  # fmt: skip
    for c in range(CAMPAIGNS):
        at = now - span + span * c / CAMPAIGNS
        campaign_id = f"cmp_dp{c:06}"
        rows["campaigns"].append((campaign_id, account_id, f"Campaign {c}", "welcome",
                                  json.dumps({"tag": [f"t{c % 10}"]}), "{}",
                                  '"Bench" <hello@bench.example.com>', None, None, "done", "",
                                  at, at, at, at, 1, None, None, ""))  # fmt: skip
        for r in range(RECIPIENTS):
            n = (c * RECIPIENTS + r) % LEADS
            message_id = f"msg_dp{c:06}{r:04}"
            rows["campaign_recipients"].append(
                (campaign_id, f"ld_dp{n:09}", f"lead-{n}@bench.example.com", "sent",
                 message_id, False, "", at)
            )  # fmt: skip
    month = timedelta(days=30)
    for i, recipient in enumerate(rows["campaign_recipients"]):
        at = now - month + month * i / len(rows["campaign_recipients"])
        campaign_id, _, address, _, message_id, _, _, _ = recipient
        rows["messages"].append((message_id, account_id, "hello@bench.example.com",
                                 json.dumps([address]), "Welcome", "welcome", 1, False,
                                 campaign_id, STATUSES[i % 100], "resend", f"re_{i}", 1, "",
                                 at, at))  # fmt: skip
        rows["message_addresses"].append((account_id, address, at, message_id))
    for s in range(SUPPRESSIONS):
        address = f"gone-{s}@bench.example.com"
        at = now - timedelta(minutes=s)
        digest = f"sha256:{s:064x}"
        rows["suppressions"].append((account_id, digest, address, REASONS[s % 4], at, None, None))
    return rows


COLUMNS = {
    "leads": ["lead_id", "account_id", "name", "email", "email_key", "source", "note",
              "created_at", "updated_at", "phone", "tags", "fields"],
    "campaigns": ["campaign_id", "account_id", "name", "template_id", "audience", "variables",
                  "sender", "reply_to", "send_at", "status", "failure_reason", "created_at",
                  "updated_at", "started_at", "finished_at", "template_version", "layout_id",
                  "layout_version", "paused_reason"],
    "campaign_recipients": ["campaign_id", "lead_id", "email", "status", "message_id",
                            "retry", "error", "updated_at"],
    "messages": ["message_id", "account_id", "sender", "recipients", "subject", "template_id",
                 "template_version", "test", "campaign_id", "status", "provider",
                 "provider_message_id", "attempts", "last_error", "created_at", "updated_at"],
    "message_addresses": ["account_id", "address", "created_at", "message_id"],
    "suppressions": ["account_id", "digest", "email", "reason", "created_at", "message_id",
                     "campaign_id"],
}  # fmt: skip


async def load(db_url: str, account_id: str) -> dict[str, int]:
    rows = _rows(account_id, datetime.now(UTC))
    connection = await asyncpg.connect(db_url, timeout=30)
    try:
        for table, records in rows.items():
            await connection.copy_records_to_table(table, records=records, columns=COLUMNS[table])
        await connection.execute("ANALYZE")
    finally:
        await connection.close()
    return {table: len(records) for table, records in rows.items()}


@contextlib.contextmanager
def serving(db_url: str, env: dict[str, str], port: int, tmp: Path) -> Iterator[str]:
    """`leadmail serve` on the database, until the block ends; its base URL."""
    log_file = (tmp / "dashboard-serve.log").open("w")
    process = subprocess.Popen(
        [str(BIN / "leadmail"), "serve", "--port", str(port)],
        cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT,
        env={**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_LEVEL": "WARNING",
             "LEADMAIL_SECRET_KEY": "bench-dashboard-signing-key-0123456789abcdef",
             "LEADMAIL_PUBLIC_URL": f"http://127.0.0.1:{port}"},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/ready", timeout=1).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"leadmail serve did not start: see {log_file.name}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
        log_file.close()


def signed_in(base: str, link_path: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=30)
    form = client.get(link_path)
    token = _CSRF.search(form.text)
    assert token, form.text[:500]
    client.post(link_path, data={"password": PASSWORD, "again": PASSWORD,
                                 "_csrf_token": token.group(1)})  # fmt: skip
    page = client.get("/app/sign-in")
    token = _CSRF.search(page.text)
    assert token
    done = client.post("/app/sign-in", data={"email": EMAIL, "password": PASSWORD,
                                             "_csrf_token": token.group(1)})  # fmt: skip
    assert done.status_code == 303, done.text[:500]
    return client


def pages(client: httpx.Client) -> list[tuple[str, str]]:
    # The overview's counts are kept by triggers: the COPY above was counted, every lead.
    total = f'id="leads-total">{LEADS:,}<'
    assert total in client.get("/app/").text, "the overview does not count every lead"
    first = client.get("/app/leads").text
    second = _NEXT.search(first)
    assert second, "the lead table has no next page"
    return [
        ("overview", "/app/"),
        ("leads, first page", "/app/leads"),
        ("leads, second page", second.group(1).replace("&amp;", "&")),
        ("leads by tag (10 %)", "/app/leads?tag=t3"),
        ("leads by source and custom field",
         "/app/leads?source=web&field_key=city&field_value=city-7"),
        ("leads searched", "/app/leads?q=lead-4242"),
        ("a lead with its timeline", "/app/leads/ld_dp000004242"),
        ("the lead form", "/app/leads/new"),
        ("imports", "/app/imports"),
        ("campaigns", "/app/campaigns"),
        ("a campaign", "/app/campaigns/cmp_dp000500"),
        ("a campaign's progress (JSON)", "/app/campaigns/cmp_dp000500/progress"),
        ("the campaign form", "/app/campaigns/new"),
        ("an audience count (JSON, 10 %)", "/app/campaigns/audience?tag=t3"),
        ("templates", "/app/templates"),
        ("a template", "/app/templates/welcome"),
        ("a template's preview", "/app/templates/welcome/preview"),
        ("suppressions", "/app/suppressions"),
        ("keys and senders", "/app/keys"),
    ]  # fmt: skip


def measure(client: httpx.Client, path: str) -> list[float]:
    for _ in range(WARMUP):
        answer = client.get(path)
        if answer.status_code != 200:
            raise RuntimeError(f"{path}: {answer.status_code} {answer.text[:300]}")
    took = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        client.get(path).raise_for_status()
        took.append((time.perf_counter() - started) * 1000)
    return sorted(took)


def run_dashboard(server_url: str, env: dict[str, str], tmp: Path, port: int) -> dict[str, Any]:
    with fresh_database(server_url, "leadmail_bench_dp") as db_url:
        cli_env = {**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_FORMAT": "json"}
        leadmail_cli(["migrate"], cli_env)
        _, account_id = account_with_key(db_url, env, ACCOUNT)
        loaded = asyncio.run(load(db_url, account_id))
        log(f"{DASHBOARD_ID}: {loaded}")
        invited = leadmail_cli(["users", "create", "--account", ACCOUNT, "--email", EMAIL], cli_env)
        link = _LINK.search(invited)
        assert link, invited
        with (
            serving(db_url, env, port, tmp) as base,
            contextlib.closing(signed_in(base, link.group(1))) as client,
        ):
            measured = []
            for name, path in pages(client):
                took = measure(client, path)
                p95 = took[int(len(took) * 0.95) - 1]
                measured.append({
                    "page": name, "path": path, "p50_ms": round(statistics.median(took), 2),
                    "p95_ms": round(p95, 2), "max_ms": round(took[-1], 2),
                })  # fmt: skip
                shown = measured[-1]
                log(f"{DASHBOARD_ID}: {name}: p50 {shown['p50_ms']} ms, p95 {shown['p95_ms']}"
                    f" ms, max {shown['max_ms']} ms")  # fmt: skip
    slowest = max(measured, key=lambda m: m["p95_ms"])
    return {
        "id": DASHBOARD_ID,
        "title": DASHBOARD_TITLE,
        "load": loaded,
        "requests_per_page": REQUESTS,
        "pages": measured,
        "slowest": slowest,
        "target_p95_ms": TARGET_P95_MS,
        "met": all(m["p95_ms"] <= TARGET_P95_MS for m in measured),
    }


def with_dashboard(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with DP's figures and its check (issue 29's ceiling on every page)."""
    if not found:
        return report
    report["dashboard"] = found
    slowest = found["slowest"]
    report["checks"] += [
        {"id": f"{DASHBOARD_ID} slowest page", "title": f"every dashboard page at {LEADS:,} leads"
         f" and {CAMPAIGNS:,} campaigns: the slowest p95 ({slowest['page']})",
         "value": slowest["p95_ms"], "unit": " ms",
         "target": f"<= {TARGET_P95_MS:g} ms", "met": found["met"]},
    ]  # fmt: skip
    return report


if __name__ == "__main__":  # python -m bench.dashboard_pages [POSTGRES_URL]: DP alone
    import sys
    import tempfile

    from tests.support.network import free_port

    from bench.servers import child_env

    url = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get(
            "LEADMAIL_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
        )
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        result = run_dashboard(url, child_env(), Path(tmp_name), free_port())
    print(json.dumps(result, indent=2))
