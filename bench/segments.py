"""Scenario T: segments at 100,000 leads of one account, on Postgres.

The leads go in by COPY (one round trip for them all), with tags drawn from a skewed
distribution (TAGS: most leads take the newsletter, few have a scholarship) and one city
tag each, custom fields, and creation times over a year; then ``ANALYZE leads``, as a
bulk load should be followed. Then, against the running ``leadmail serve``, one client
asks each case's first page (limit 50) and its count, one request at a time (the latency
of one answer, not throughput), and the plans Postgres chose are written down: EXPLAIN
ANALYZE of the statements the server sends, as a custom plan and as the generic plan a
prepared statement can settle on.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from bench.common import log
from bench.scenarios import SEGMENT_ID
from leadmail.adapters.db import lead_segments
from leadmail.adapters.db.leads import LEADS as MAPPED
from leadmail.domain.lead_listing import LeadQuery

SEGMENT_TITLE = "tag filter at 100,000 leads: first page and count"
LEAD_COUNT = 100_000
TARGET_MS = 50.0
# Share of leads with each tag: a newsletter most take, a cohort or a scholarship few.
TAGS = {
    "newsletter": 0.60,
    "evening": 0.30,
    "weekend": 0.15,
    "vip": 0.05,
    "alumni": 0.02,
    "march-cohort": 0.005,
    "scholarship": 0.001,
}
CITIES = [f"city:{name}" for name in ("leeds", "york", "bath", "hull", "ely", "derby",
          "exeter", "truro", "wells", "ripon", "salford", "preston", "lancaster", "durham",
          "carlisle", "chester", "lincoln", "norwich", "oxford", "cambridge")]  # fmt: skip
# The segments asked: (name, query parameters).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("tag newsletter (60 %)", {"tag": "newsletter"}),
    ("tag vip (5 %)", {"tag": "vip"}),
    ("tag scholarship (0.1 %)", {"tag": "scholarship"}),
    # No lead has it: a plan that walks the listing index reads the whole account.
    ("tag nobody has (0 %)", {"tag": "unheard-of"}),
    ("tag vip + city:york", {"tag": ["vip", "city:york"]}),
    ("any_tag alumni, scholarship", {"any_tag": ["alumni", "scholarship"]}),
    ("tag evening, not_tag vip", {"tag": "evening", "not_tag": "vip"}),
    ("tag weekend + field.newsletter=true", {"tag": "weekend", "field.newsletter": "true"}),
]
WARMUP = 10
REQUESTS = 100  # per case and endpoint


def records(account_id: str, count: int, seed: int = 13) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)  # noqa: S311  (test data, repeatable)
    start = datetime(2025, 11, 1, tzinfo=UTC)
    step = timedelta(days=365) / count
    rows = []
    for n in range(count):
        tags = sorted({tag for tag, share in TAGS.items() if rng.random() < share}
                      | {rng.choice(CITIES)})  # fmt: skip
        fields = {"age": rng.randint(18, 65), "newsletter": "newsletter" in tags,
                  "course": rng.choice(["python", "data", "design", "writing"])}  # fmt: skip
        at = start + n * step
        email = f"seg-{n}@bench.example.com"
        rows.append((f"ld_seg{uuid.UUID(int=rng.getrandbits(128)).hex[:19]}", account_id,
                     f"Lead {n}", email, email, "bench", "", at, at, "", tags,
                     json.dumps(fields)))  # fmt: skip
    return rows


COLUMNS = ["lead_id", "account_id", "name", "email", "email_key", "source", "note",
           "created_at", "updated_at", "phone", "tags", "fields"]  # fmt: skip


async def load(db_url: str, account_id: str, count: int = LEAD_COUNT) -> dict[str, float]:
    return await copy_leads(db_url, records(account_id, count))


async def copy_leads(db_url: str, rows: list[tuple[Any, ...]]) -> dict[str, float]:
    """``rows`` (COLUMNS) into leads by COPY, then ANALYZE: how many, and how long each
    step took."""
    count = len(rows)
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.copy_records_to_table("leads", records=rows, columns=COLUMNS)
        copied = time.perf_counter() - started
        await connection.execute("ANALYZE leads")
        analyzed = time.perf_counter() - started - copied
    finally:
        await connection.close()
    return {"leads": count, "copy_s": round(copied, 2), "analyze_s": round(analyzed, 2)}


def latencies(url: str, key: str, path: str, params: dict[str, Any]) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    times: list[float] = []
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        for n in range(WARMUP + REQUESTS):
            started = time.perf_counter()
            response = client.get(path, params=params)
            took = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"{path} {params}: {response.status_code} {response.text}")
            if n >= WARMUP:
                times.append(took)
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "max_ms": round(ordered[-1], 2),
    }


def statements(account_id: str, params: dict[str, Any]) -> dict[str, tuple[str, list[Any]]]:
    """The page and count statements the server sends for these parameters."""
    pairs = [(k, v) for k, vs in params.items() for v in (vs if isinstance(vs, list) else [vs])]
    query = LeadQuery.parse(limit=50, segment=pairs)
    page_text, page_args = lead_segments.page("postgres", account_id, query, "*")
    count_text, count_args = lead_segments.count("postgres", account_id, query.filter)
    return {
        "page": (MAPPED.statement(page_text).postgres, page_args),
        "count": (MAPPED.statement(count_text).postgres, count_args),
    }


def _literal(value: Any) -> str:
    """A statement's argument written as SQL (bench data only: our own tags and ids)."""
    if isinstance(value, list):
        return "ARRAY[" + ", ".join(_literal(v) for v in value) + "]::text[]"
    if isinstance(value, datetime):
        return f"'{value.isoformat()}'::timestamptz"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


async def plans(db_url: str, account_id: str) -> dict[str, Any]:
    """EXPLAIN ANALYZE of each case's statements: the custom plan (planned for these
    values, as a prepared statement's first five runs are) and the generic plan (for any
    values, which a prepared statement may keep after them)."""
    connection = await asyncpg.connect(db_url, timeout=10)
    found: dict[str, Any] = {}
    try:
        for name, params in CASES:
            for kind, (text, args) in statements(account_id, params).items():
                entry = {}
                await connection.execute(f"PREPARE segment AS {text}")
                execute = f"EXECUTE segment({', '.join(_literal(a) for a in args)})"
                for mode in ("force_custom_plan", "force_generic_plan"):
                    await connection.execute(f"SET plan_cache_mode = {mode}")
                    rows = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {execute}")
                    entry[mode.split("_")[1]] = [row[0] for row in rows]
                await connection.execute("DEALLOCATE segment")
                found[f"{name}: {kind}"] = entry
    finally:
        await connection.close()
    return found


def run_segments(url: str, key: str, db_url: str, account_id: str) -> dict[str, Any]:
    loaded = asyncio.run(load(db_url, account_id))
    log(f"{SEGMENT_ID}: {loaded['leads']:,} leads copied in {loaded['copy_s']} s,"
        f" analyzed in {loaded['analyze_s']} s")  # fmt: skip
    cases = []
    for name, params in CASES:
        page = summary(latencies(url, key, "/api/v1/leads", {**params, "limit": 50}))
        count_times = latencies(url, key, "/api/v1/leads/count", params)
        count = summary(count_times)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
            matched = client.get("/api/v1/leads/count", params=params).json()["data"]["count"]
        cases.append({"case": name, "params": params, "matches": matched, "page": page,
                      "count": count})  # fmt: skip
        log(
            f"{SEGMENT_ID} {name}: {matched:,} leads; page p50 {page['p50_ms']} ms,"
            f" p99 {page['p99_ms']} ms; count p50 {count['p50_ms']} ms,"
            f" p99 {count['p99_ms']} ms"
        )
    worst = max(max(c["page"]["p99_ms"], c["count"]["p99_ms"]) for c in cases)
    return {
        "id": SEGMENT_ID,
        "title": SEGMENT_TITLE,
        "load": loaded,
        "requests_per_case": REQUESTS,
        "target_ms": TARGET_MS,
        "worst_p99_ms": worst,
        "met": worst <= TARGET_MS,
        "cases": cases,
        "plans": asyncio.run(plans(db_url, account_id)),
    }
