"""Scenario ML: the message log (GET /api/v1/email/messages) at 1,000,000 messages of one
account against 1,000 of another, on Postgres (issue 27: a page costs the same with 10
million messages as with 10).

Each account's messages go in by COPY with their message_addresses rows, as a send writes
them, drawn alike: one recipient each, ten messages to each address, half from one
template, 2 % of those of one campaign, 1 % failed, created at the same pace (1,000,000 in
a year); then ``ANALYZE``. The small account is 1,000 rather than 10 so that every case
fills the same page in both (a page of 10 costs less to answer than a page of 50, and the
figure is what the size of the log adds). Then, against the running ``leadmail serve``,
one client asks each case's first page (limit 10), one request at a time, in both
accounts; the figure is the ratio of the two medians. The plans Postgres chose for the big
account are written down (EXPLAIN ANALYZE of the statements the server sends).
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from bench.common import log
from bench.scenarios import MESSAGE_LOG_ID
from leadmail.adapters.db import message_listing
from leadmail.adapters.db.messages import MESSAGES as MAPPED
from leadmail.domain.message_listing import STATUS_WINDOW, MessageQuery

MESSAGE_LOG_TITLE = "message log at 1,000,000 messages vs at 1,000: first page"
BIG = 1_000_000
SMALL = 1_000
PAGE = 10
START = datetime(2025, 12, 1, tzinfo=UTC)
TARGET_RATIO = 1.5  # p50 at BIG over p50 at SMALL, each index-served case
TARGET_P99_MS = 50.0
WARMUP = 10
REQUESTS = 100  # per case and account
CAMPAIGN = "cmp_benchmessagelog"
# The cases: (name, query parameters, served by an index).
CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("newest first", {}, True),
    ("to one address (10 messages)", {"to": "person-42@bench.example.com"}, True),
    ("template_id (half of them)", {"template_id": "welcome"}, True),
    ("campaign_id (1 %)", {"campaign_id": CAMPAIGN}, True),
    ("a day's messages",
     {"created_after": (START + timedelta(hours=1)).isoformat(),
      "created_before": (START + timedelta(hours=25)).isoformat()}, True),
    ("status failed (1 %)", {"status": "failed"}, False),
    ("status failed, to one address",
     {"status": "failed", "to": "person-7@bench.example.com"}, False),
]  # fmt: skip
COLUMNS = ["message_id", "account_id", "sender", "recipients", "subject", "template_id",
           "template_version", "test", "campaign_id", "status", "provider",
           "provider_message_id", "attempts", "last_error", "created_at", "updated_at"]  # fmt: skip
ADDRESS_COLUMNS = ["account_id", "address", "created_at", "message_id"]


def records(account_id: str, count: int, seed: int = 27) -> tuple[list[Any], list[Any]]:
    rng = random.Random(seed)  # noqa: S311  (test data, repeatable)
    step = timedelta(days=365) / BIG  # the same pace in both accounts
    messages, addresses = [], []
    for n in range(count):
        at = START + n * step
        message_id = f"msg_log{account_id[-6:]}{n:08}"
        address = f"person-{n % (count // 10)}@bench.example.com"
        template = "welcome" if n % 2 == 0 else None
        campaign = CAMPAIGN if template and n % 100 < 2 else None
        status = "failed" if rng.random() < 0.01 else "sent"
        messages.append((message_id, account_id, "school@bench.example.com",
                         json.dumps([address]), "Hello", template, 1 if template else None,
                         False, campaign, status, "resend", f"re_{n}", 1, "", at, at))  # fmt: skip
        addresses.append((account_id, address, at, message_id))
    return messages, addresses


async def load(db_url: str, account_id: str, count: int) -> dict[str, float]:
    messages, addresses = records(account_id, count)
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.copy_records_to_table("messages", records=messages, columns=COLUMNS)
        await connection.copy_records_to_table(
            "message_addresses", records=addresses, columns=ADDRESS_COLUMNS
        )
        copied = time.perf_counter() - started
        await connection.execute("ANALYZE messages")
        await connection.execute("ANALYZE message_addresses")
        analyzed = time.perf_counter() - started - copied
    finally:
        await connection.close()
    return {"messages": count, "copy_s": round(copied, 2), "analyze_s": round(analyzed, 2)}


def latencies(url: str, key: str, params: dict[str, Any]) -> tuple[list[float], int]:
    headers = {"Authorization": f"Bearer {key}"}
    times: list[float] = []
    found = 0
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        for n in range(WARMUP + REQUESTS):
            started = time.perf_counter()
            response = client.get("/api/v1/email/messages", params={**params, "limit": PAGE})
            took = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"{params}: {response.status_code} {response.text}")
            if n >= WARMUP:
                times.append(took)
            found = len(response.json()["data"]["items"])
    return times, found


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
    }


def _literal(value: Any) -> str:
    """A statement's argument written as SQL (bench data only)."""
    if isinstance(value, datetime):
        return f"'{value.isoformat()}'::timestamptz"
    return "'" + str(value).replace("'", "''") + "'"


async def plans(db_url: str, account_id: str) -> dict[str, list[str]]:
    """EXPLAIN ANALYZE of each case's statement in the big account (custom plans)."""
    connection = await asyncpg.connect(db_url, timeout=10)
    found: dict[str, list[str]] = {}
    try:
        for name, params, _ in CASES:
            query = MessageQuery.parse(limit=PAGE, **params)
            text, args = message_listing.page(account_id, query, MAPPED.columns, STATUS_WINDOW)
            sql = MAPPED.statement(text).postgres
            for number in range(len(args), 0, -1):  # $10 before $1
                sql = sql.replace(f"${number}", _literal(args[number - 1]))
            rows = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
            found[name] = [row[0] for row in rows]
    finally:
        await connection.close()
    return found


def run_message_log(
    url: str, big: tuple[str, str], small: tuple[str, str], db_url: str
) -> dict[str, Any]:
    """``big`` and ``small``: (key, account id) of two accounts of their own."""
    loaded = asyncio.run(load(db_url, big[1], BIG))
    asyncio.run(load(db_url, small[1], SMALL))
    log(f"{MESSAGE_LOG_ID}: {BIG:,} messages copied in {loaded['copy_s']} s,"
        f" analyzed in {loaded['analyze_s']} s")  # fmt: skip
    cases: list[dict[str, Any]] = []
    for name, params, indexed in CASES:
        big_times, big_found = latencies(url, big[0], params)
        small_times, small_found = latencies(url, small[0], params)
        at_big, at_small = summary(big_times), summary(small_times)
        ratio = round(at_big["p50_ms"] / at_small["p50_ms"], 2)
        cases.append({"case": name, "params": params, "indexed": indexed,
                      "items_big": big_found, "items_small": small_found,
                      "big": at_big, "small": at_small, "ratio_p50": ratio})  # fmt: skip
        log(
            f"{MESSAGE_LOG_ID} {name}: {big_found} items; at {BIG:,} p50 {at_big['p50_ms']} ms,"
            f" p99 {at_big['p99_ms']} ms; at {SMALL} p50 {at_small['p50_ms']} ms; {ratio}x"
        )
    served = [c for c in cases if c["indexed"]]
    return {
        "id": MESSAGE_LOG_ID,
        "title": MESSAGE_LOG_TITLE,
        "load": loaded,
        "requests_per_case": REQUESTS,
        "target_ratio": TARGET_RATIO,
        "target_p99_ms": TARGET_P99_MS,
        "worst_ratio": max(c["ratio_p50"] for c in served),
        "worst_p99_ms": max(c["big"]["p99_ms"] for c in cases),
        "cases": cases,
        "plans": asyncio.run(plans(db_url, big[1])),
    }


def with_message_log(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with ML's figures and their checks (issue 27's targets)."""
    if not found:
        return report
    report["message_log"] = found
    worst_ratio, worst_p99 = found["worst_ratio"], found["worst_p99_ms"]
    report["checks"] += [
        {"id": f"{MESSAGE_LOG_ID} ratio", "title": f"page p50 at {BIG:,} / at {SMALL}, worst"
         " index-served case", "value": worst_ratio, "unit": "x",
         "target": f"<= {TARGET_RATIO:g}x", "met": worst_ratio <= TARGET_RATIO},
        {"id": f"{MESSAGE_LOG_ID} p99", "title": f"page p99 at {BIG:,}, worst case",
         "value": worst_p99, "unit": " ms", "target": f"<= {TARGET_P99_MS:g} ms",
         "met": worst_p99 <= TARGET_P99_MS},
    ]  # fmt: skip
    return report
