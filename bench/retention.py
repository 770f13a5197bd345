"""Scenario RP: the retention purge (issue 28) of 200,000 messages past their time, on
Postgres, in a database of its own: batches that never hold their rows for more than
100 ms, while a webhook-like writer keeps updating the very messages being purged.

The rows go in by COPY, as the service writes them: one account's 200,000 messages sent
a year ago (one recipient each, with its message_addresses row; one in four with two
provider events; half of them for a campaign, each with its campaign_recipients row
naming it) and 20,000 sent yesterday, which stay; 100,000 idempotency claims of three
days ago and 1,000 of an hour ago; then ``ANALYZE``. Then ``leadmail purge --json`` (the
real CLI, LEADMAIL_RETENTION_DAYS=90) runs while a probe updates the status of a random
old message every 5 ms, as provider webhooks would (each UPDATE waits for the batch that
holds its row): the probe's slowest UPDATE is the lock a batch held, seen from outside.

The ceiling, measured in the same run on the same rows: the same removal as four plain
statements in one transaction (recipients unlinked, addresses, messages with their events
by cascade, claims), rolled back: the least Postgres can do for it, holding every row
until the end. The figure is the purge's time over it, and its longest batch.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import subprocess
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from bench.common import BIN, ROOT, log
from bench.database import fresh_database
from bench.scenarios import RETENTION_ID

RETENTION_TITLE = "retention purge of 200,000 messages (with events, addresses, recipients)"
OLD = 200_000
NEW = 20_000
OLD_CLAIMS = 100_000
NEW_CLAIMS = 1_000
TARGET_BATCH_MS = 100.0
PROBE_EVERY_S = 0.005
ACCOUNT = "acc_benchretention"
CAMPAIGN = "cmp_benchretention"
MESSAGE_COLUMNS = [
    "message_id",
    "account_id",
    "sender",
    "recipients",
    "subject",
    "template_id",
    "template_version",
    "test",
    "campaign_id",
    "status",
    "provider",
    "provider_message_id",
    "attempts",
    "last_error",
    "created_at",
    "updated_at",
]


def _rows(now: datetime) -> dict[str, list[tuple[Any, ...]]]:
    year_ago, yesterday = now - timedelta(days=365), now - timedelta(days=1)
    rows: dict[str, list[tuple[Any, ...]]] = {
        "messages": [], "message_addresses": [], "message_events": [],
        "campaign_recipients": [], "idempotency_keys": [],
    }  # fmt: skip
    for n in range(OLD + NEW):
        at = year_ago + timedelta(seconds=n) if n < OLD else yesterday + timedelta(seconds=n)
        message_id = f"msg_rp{n:09}"
        address = f"person-{n}@bench.example.com"
        campaign = CAMPAIGN if n % 2 == 0 else None
        rows["messages"].append((message_id, ACCOUNT, "school@bench.example.com",
                                 json.dumps([address]), "Hello", None, None, False, campaign,
                                 "sent", "resend", f"re_{n}", 1, "", at, at))  # fmt: skip
        rows["message_addresses"].append((ACCOUNT, address, at, message_id))
        if n % 4 == 0:
            for kind in ("delivered", "opened"):
                rows["message_events"].append(
                    (message_id, ACCOUNT, "resend", f"ev_{kind}_{n}", kind, None, at, "")
                )
        if campaign:
            rows["campaign_recipients"].append(
                (CAMPAIGN, f"ld_rp{n:09}", address, "sent", message_id, False, "", at)
            )
    for n in range(OLD_CLAIMS + NEW_CLAIMS):
        at = now - (timedelta(days=3) if n < OLD_CLAIMS else timedelta(hours=1))
        rows["idempotency_keys"].append(
            (f"clm_rp{n:09}", ACCOUNT, f"order-{n}", "f" * 64, "t" * 32, "finished", "[]", at, at)
        )
    return rows


COLUMNS = {
    "messages": MESSAGE_COLUMNS,
    "message_addresses": ["account_id", "address", "created_at", "message_id"],
    "message_events": [
        "message_id",
        "account_id",
        "provider",
        "event_id",
        "type",
        "bounce",
        "at",
        "detail",
    ],
    "campaign_recipients": (
        ["campaign_id", "lead_id", "email", "status", "message_id", "retry", "error", "updated_at"]
    ),
    "idempotency_keys": [
        "claim_id",
        "account_id",
        "key",
        "fingerprint",
        "token",
        "state",
        "message_ids",
        "created_at",
        "updated_at",
    ],
}


async def load(db_url: str) -> dict[str, Any]:
    now = datetime.now(UTC)
    rows = _rows(now)
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        started = time.perf_counter()
        await connection.execute(
            "INSERT INTO accounts (account_id, name, created_at, daily_quota)"
            " VALUES ($1, 'bench-retention', $2, 0)",
            ACCOUNT,
            now,
        )
        await connection.execute(
            "INSERT INTO campaigns (campaign_id, account_id, name, template_id, audience,"
            " variables, sender, status, failure_reason, created_at, updated_at)"
            " VALUES ($1, $2, 'Open day', 'welcome', '{}', '{}', 'school@bench.example.com',"
            " 'done', '', $3, $3)",
            CAMPAIGN,
            ACCOUNT,
            now - timedelta(days=365),
        )
        for table, records in rows.items():
            await connection.copy_records_to_table(table, records=records, columns=COLUMNS[table])
        copied = time.perf_counter() - started
        for table in rows:
            await connection.execute(f"ANALYZE {table}")
    finally:
        await connection.close()
    return {table: len(records) for table, records in rows.items()} | {"copy_s": round(copied, 2)}


async def ceiling(db_url: str) -> float:
    """The same removal as four plain statements in one transaction, rolled back."""
    cutoff = datetime.now(UTC) - timedelta(days=90)
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        transaction = connection.transaction()
        await transaction.start()
        started = time.perf_counter()
        old = "SELECT message_id FROM messages WHERE account_id = $1 AND created_at < $2"
        await connection.execute(
            f"UPDATE campaign_recipients SET message_id = NULL WHERE message_id IN ({old})",  # noqa: S608
            ACCOUNT,
            cutoff,
        )
        await connection.execute(
            f"DELETE FROM message_addresses WHERE account_id = $1 AND message_id IN ({old})",  # noqa: S608
            ACCOUNT,
            cutoff,
        )
        await connection.execute(
            "DELETE FROM messages WHERE account_id = $1 AND created_at < $2", ACCOUNT, cutoff
        )
        await connection.execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1",
            datetime.now(UTC) - timedelta(hours=24),
        )
        took = time.perf_counter() - started
        await transaction.rollback()
    finally:
        await connection.close()
    return took


async def probe(db_url: str, stop: asyncio.Event) -> list[float]:
    """A random old message's status updated every PROBE_EVERY_S until ``stop``: each
    UPDATE's time, in ms (one that finds its message gone is as quick, and counted)."""
    rng = random.Random(28)  # noqa: S311  (bench data, repeatable)
    connection = await asyncpg.connect(db_url, timeout=10)
    times: list[float] = []
    try:
        while not stop.is_set():
            message_id = f"msg_rp{rng.randrange(OLD):09}"
            started = time.perf_counter()
            await connection.execute(
                "UPDATE messages SET status = 'delivered', updated_at = now()"
                " WHERE message_id = $1",
                message_id,
            )
            times.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(PROBE_EVERY_S)
    finally:
        await connection.close()
    return times


async def purge_with_probe(
    db_url: str, env: dict[str, str]
) -> tuple[dict[str, Any], float, list[float]]:
    stop = asyncio.Event()
    probing = asyncio.create_task(probe(db_url, stop))
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        str(BIN / "leadmail"), "purge", "--json",
        cwd=ROOT,
        env={**env, "LEADMAIL_DATABASE_URL": db_url, "LEADMAIL_LOG_FORMAT": "json",
             "LEADMAIL_RETENTION_DAYS": "90"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    took = time.perf_counter() - started
    stop.set()
    times = await probing
    if process.returncode != 0:
        raise RuntimeError(f"leadmail purge failed:\n{err.decode()[-3000:]}")
    return json.loads(out.decode().strip().splitlines()[-1]), took, times


async def left(db_url: str) -> dict[str, int]:
    connection = await asyncpg.connect(db_url, timeout=10)
    try:
        return {
            "messages": await connection.fetchval("SELECT count(*) FROM messages"),
            "message_addresses": await connection.fetchval(
                "SELECT count(*) FROM message_addresses"
            ),
            "message_events": await connection.fetchval("SELECT count(*) FROM message_events"),
            "recipients_with_message_id": await connection.fetchval(
                "SELECT count(*) FROM campaign_recipients WHERE message_id IS NOT NULL"
            ),
            "idempotency_keys": await connection.fetchval("SELECT count(*) FROM idempotency_keys"),
        }
    finally:
        await connection.close()


def run_retention(server_url: str, env: dict[str, str]) -> dict[str, Any]:
    with fresh_database(server_url, "leadmail_bench_rp") as db_url:
        migrated = subprocess.run(
            [str(BIN / "leadmail"), "migrate"], cwd=ROOT, capture_output=True, text=True,
            env={**env, "LEADMAIL_DATABASE_URL": db_url}, timeout=300, check=False,
        )  # fmt: skip
        if migrated.returncode != 0:
            raise RuntimeError(f"leadmail migrate failed:\n{migrated.stderr[-3000:]}")
        loaded = asyncio.run(load(db_url))
        log(f"{RETENTION_ID}: {loaded}")
        ceiling_s = asyncio.run(ceiling(db_url))
        log(
            f"{RETENTION_ID}: ceiling (the same removal, 4 statements, one transaction)"
            f" {ceiling_s:.2f} s"
        )
        report, took, probe_ms = asyncio.run(purge_with_probe(db_url, env))
        remaining = asyncio.run(left(db_url))
    ordered = sorted(probe_ms)
    not_rows = ("batches", "longest_batch_ms", "longest_batch_ms_of", "recipients_unlinked")
    rows = sum(v for k, v in report.items() if k not in not_rows)
    found = {
        "id": RETENTION_ID,
        "title": RETENTION_TITLE,
        "load": loaded,
        "purged": report,
        "left": remaining,
        "purge_s": round(took, 2),
        "rows_per_s": round(rows / took),
        "ceiling_s": round(ceiling_s, 2),
        "over_ceiling": round(took / ceiling_s, 2),
        "longest_batch_ms": report["longest_batch_ms"],
        "longest_batch_ms_of": report["longest_batch_ms_of"],
        "probe": {
            "updates": len(ordered),
            "p50_ms": round(statistics.median(ordered), 2),
            "p99_ms": round(ordered[int(len(ordered) * 0.99)], 2),
            "max_ms": round(ordered[-1], 2),
        },
        "target_batch_ms": TARGET_BATCH_MS,
    }
    found["met"] = (
        report["messages"] == OLD
        and remaining["messages"] == NEW
        and remaining["recipients_with_message_id"] == NEW // 2  # the newer messages'
        and remaining["message_addresses"] == NEW
        and report["longest_batch_ms"] <= TARGET_BATCH_MS
    )
    log(
        f"{RETENTION_ID}: {rows:,} rows in {took:.2f} s ({found['rows_per_s']:,} rows/s,"
        f" {found['over_ceiling']}x the plain statements), {report['batches']} batches, the"
        f" longest {report['longest_batch_ms']} ms; the probe's UPDATEs: p50"
        f" {found['probe']['p50_ms']} ms, p99 {found['probe']['p99_ms']} ms, max"
        f" {found['probe']['max_ms']} ms ({found['probe']['updates']:,} of them)"
    )
    return found


def with_retention(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The report with RP's figures and its check (issue 28's ceiling on a batch)."""
    if not found:
        return report
    report["retention"] = found
    report["checks"] += [
        {"id": f"{RETENTION_ID} longest batch", "title": f"{OLD:,} messages purged (with"
         " events, addresses, recipients) and 100,000 claims: the longest batch",
         "value": found["longest_batch_ms"], "unit": " ms",
         "target": f"<= {TARGET_BATCH_MS:g} ms", "met": found["met"]},
    ]  # fmt: skip
    return report
