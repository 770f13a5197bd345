"""Scenario QS: a lead search (``q``) at 1,000,000 leads of one account, on Postgres (issue
27: within 50 ms p99).

The leads go in by COPY: a first name and a surname drawn from lists (a tenth of the
surnames hyphenated, a few first names rare), an address made of them, creation times over
a year; then ``ANALYZE leads`` and ``VACUUM (ANALYZE) leads``. Then, against the running
``leadmail serve``, one client asks each case's first page (``GET /api/v1/leads?q=...``,
50 a page) and its count, one request at a time, and the plans Postgres chose are written
down (EXPLAIN ANALYZE of the statements the server sends: the page in the newest leads,
the page of the matches, the count).
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from bench.common import log
from bench.scenarios import SEARCH_ID
from bench.segments import REQUESTS, _literal, copy_leads, latencies, summary
from leadmail.adapters.db import lead_segments
from leadmail.adapters.db.leads import LEADS as MAPPED
from leadmail.adapters.db.leads import PAGE_WINDOW
from leadmail.domain.lead_listing import LeadQuery

SEARCH_TITLE = "lead search (q) at 1,000,000 leads: first page and count"
LEAD_COUNT = 1_000_000
TARGET_MS = 50.0
FIRST = ["Ada", "Mary", "John", "Grace", "Tom", "Alan", "Sarah", "James", "Emma", "Olivia",
         "Liam", "Noah", "Ava", "Sophia", "Isabella", "Mia", "Amelia", "Harper", "Evelyn",
         "Abigail", "Ella", "Lucas", "Mason", "Logan", "Ethan", "Jacob", "Michael", "Daniel",
         "Henry", "Jackson", "Sebastian", "Aiden", "Matthew", "Samuel", "David", "Joseph",
         "Carter", "Owen", "Wyatt", "Luke", "Zoë", "Chloé", "Björn", "Siobhán", "Aoife",
         "Priya", "Arjun", "Mei", "Wei", "Yusuf"]  # fmt: skip
RARE_FIRST = ["Ottoline", "Peregrine", "Quillon"]  # 1 lead in 10,000 each
SURNAMES = ["Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies",
            "Robinson", "Wright", "Thompson", "Evans", "Walker", "White", "Roberts", "Green",
            "Hall", "Wood", "Jackson", "Clarke", "Lovelace", "Hopper", "Turing", "Adams",
            "O'Brien", "Murphy", "Kelly", "Singh", "Patel", "Khan", "Nguyen", "Chen", "Müller",
            "García", "Martínez", "Rossi", "Novak", "Kowalski", "Andersson", "Dubois"]  # fmt: skip
DOMAINS = ["example.com", "mail.example.org", "school.example", "uni.example.ac.uk"]
# (name, query parameters).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("one letter: q=a", {"q": "a"}),
    ("a common first name: q=mar", {"q": "mar"}),
    ("a surname: q=lovel", {"q": "lovel"}),
    ("after a hyphen: q=smith-j", {"q": "smith-j"}),
    ("a rare first name: q=ottol", {"q": "ottol"}),
    ("an address: q=ada.hopper7", {"q": "ada.hopper7"}),
    ("nobody: q=zzqx", {"q": "zzqx"}),
    ("q=mar with tag=vip", {"q": "mar", "tag": "vip"}),
]


def records(account_id: str, count: int, seed: int = 27) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)  # noqa: S311  (test data, repeatable)
    start = datetime(2025, 11, 1, tzinfo=UTC)
    step = timedelta(days=365) / count
    rows = []
    for n in range(count):
        first = rng.choice(RARE_FIRST) if rng.random() < 0.0003 else rng.choice(FIRST)
        last = rng.choice(SURNAMES)
        if rng.random() < 0.1:
            last = f"{last}-{rng.choice(SURNAMES)}"
        local = f"{first}.{last}{n}".lower().replace("'", "")
        email = f"{local}@{rng.choice(DOMAINS)}"
        tags = ["vip"] if rng.random() < 0.05 else []
        at = start + n * step
        rows.append((f"ld_qs{uuid.UUID(int=rng.getrandbits(128)).hex[:20]}", account_id,
                     f"{first} {last}", email, email.lower(), "bench", "", at, at, "", tags,
                     "{}"))  # fmt: skip
    return rows


async def load(db_url: str, account_id: str, count: int = LEAD_COUNT) -> dict[str, float]:
    """The leads copied, then VACUUM: the steady state of an account that size (else
    autovacuum, woken by a million new rows, reads the table and merges the trigram
    index's pending entries while the searches are timed: their p99 rose to 4x the p50)."""
    loaded = await copy_leads(db_url, records(account_id, count))
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.execute("VACUUM (ANALYZE) leads")
        loaded["vacuum_s"] = round(time.perf_counter() - started, 2)
    finally:
        await connection.close()
    return loaded


def statements(account_id: str, params: dict[str, Any]) -> dict[str, tuple[str, list[Any]]]:
    """The statements the server sends for these parameters: the page among the newest
    leads, the page of the matches (when that one is short), the count."""
    query = LeadQuery.parse(limit=50, segment=list(params.items()))
    window = lead_segments.page_in_window(account_id, query, "*", PAGE_WINDOW)
    matches = lead_segments.page_of_matches(account_id, query, "*")
    count = lead_segments.count("postgres", account_id, query.filter)
    return {
        name: (MAPPED.statement(text).postgres, args)
        for name, (text, args) in
        (("page in window", window), ("page of matches", matches), ("count", count))
    }  # fmt: skip


async def plans(db_url: str, account_id: str) -> dict[str, Any]:
    connection = await asyncpg.connect(db_url, timeout=10)
    found: dict[str, Any] = {}
    try:
        for name, params in CASES:
            for kind, (text, args) in statements(account_id, params).items():
                await connection.execute(f"PREPARE search AS {text}")
                execute = f"EXECUTE search({', '.join(_literal(a) for a in args)})"
                rows = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {execute}")
                await connection.execute("DEALLOCATE search")
                found[f"{name}: {kind}"] = [row[0] for row in rows]
    finally:
        await connection.close()
    return found


def run_search(url: str, key: str, db_url: str, account_id: str) -> dict[str, Any]:
    loaded = asyncio.run(load(db_url, account_id))
    log(f"{SEARCH_ID}: {loaded['leads']:,} leads copied in {loaded['copy_s']} s,"
        f" analyzed in {loaded['analyze_s']} s, vacuumed in {loaded['vacuum_s']} s")  # fmt: skip
    cases = []
    for name, params in CASES:
        page = summary(latencies(url, key, "/api/v1/leads", {**params, "limit": 50}))
        count = summary(latencies(url, key, "/api/v1/leads/count", params))
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
            matched = client.get("/api/v1/leads/count", params=params).json()["data"]["count"]
        cases.append({"case": name, "params": params, "matches": matched, "page": page,
                      "count": count})  # fmt: skip
        log(
            f"{SEARCH_ID} {name}: {matched:,} leads; page p50 {page['p50_ms']} ms,"
            f" p99 {page['p99_ms']} ms; count p50 {count['p50_ms']} ms,"
            f" p99 {count['p99_ms']} ms"
        )
    worst_page = max(c["page"]["p99_ms"] for c in cases)
    worst_count = max(c["count"]["p99_ms"] for c in cases)
    return {
        "id": SEARCH_ID,
        "title": SEARCH_TITLE,
        "load": loaded,
        "requests_per_case": REQUESTS,
        "target_ms": TARGET_MS,
        "worst_page_p99_ms": worst_page,
        "worst_count_p99_ms": worst_count,
        "met": worst_page <= TARGET_MS,
        "cases": cases,
        "plans": asyncio.run(plans(db_url, account_id)),
    }


def with_search(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with QS's figures and its check (issue 27's target)."""
    if not found:
        return report
    report["lead_search"] = found
    report["checks"] += [
        {"id": f"{SEARCH_ID} page p99", "title": f"search page p99 at {LEAD_COUNT:,} leads,"
         " worst case", "value": found["worst_page_p99_ms"], "unit": " ms",
         "target": f"<= {TARGET_MS:g} ms", "met": found["met"]},
    ]  # fmt: skip
    return report
