"""What an export and an erasure (GDPR articles 15 and 17) cost on Postgres in an account
with 1,000,000 messages, 1,000,000 campaign recipients (ten campaigns) and 100,000 leads:
each person has ten messages and ten recipients. Seven people exported then erased, the
median of each, with leadmail's own repository (adapters/db/privacy.py) on a fresh
database. About two minutes, most of it the seeding.

    .venv/bin/python -m bench.privacy_cost [postgres server url]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

import asyncpg

from bench.database import database_name, fresh_database
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.db.privacy import PiccoloPersonalData
from leadmail.domain.privacy import DataSubject

SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
_LEADS = (
    "INSERT INTO leads (lead_id, account_id, name, email, email_key, source, note, created_at,"
    " updated_at, phone, tags, fields) SELECT 'ld_'||i, 'acc_b', 'n', 'p'||i||'@example.com',"
    " 'p'||i||'@example.com', '', '', now(), now(), '', '{}', '{}'"
    " FROM generate_series(0, 99999) i"
)
_MESSAGES = (
    "INSERT INTO messages (message_id, account_id, sender, recipients, subject, template_id,"
    " status, provider, provider_message_id, attempts, last_error, created_at, updated_at)"
    " SELECT 'msg_'||i, 'acc_b', 'a@b.c', '[\"\\\"P\\\" <p'||(i % 100000)||'@example.com>\"]',"
    " 'hi', NULL, 'sent', 'resend', NULL, 1, '', now() - (i||' seconds')::interval, now()"
    " FROM generate_series(1, 1000000) i"
)
_CAMPAIGNS = (
    "INSERT INTO campaigns (campaign_id, account_id, name, template_id, audience, variables,"
    " sender, reply_to, send_at, status, failure_reason, created_at, updated_at, started_at,"
    " finished_at) SELECT 'cmp_'||i, 'acc_b', 'c', 'welcome', '{}', '{}', 'a@b.c', NULL, NULL,"
    " 'done', '', now(), now(), NULL, NULL FROM generate_series(1, 10) i"
)
_RECIPIENTS = (
    "INSERT INTO campaign_recipients (campaign_id, lead_id, email, status, message_id, batch_id,"
    " lease_id, retry, lease_until, error, updated_at) SELECT 'cmp_'||((i - 1) / 100000 + 1),"
    " 'ld_'||(i % 100000), 'p'||(i % 100000)||'@example.com', 'sent', NULL, NULL, NULL, false,"
    " NULL, '', now() FROM generate_series(1, 1000000) i"
)


async def measure(url: str) -> None:
    async with Database.from_url(url).running() as db:
        await migrate(db)
        seeding = await asyncpg.connect(url)
        try:
            await seeding.execute("INSERT INTO accounts VALUES ('acc_b', 'bench', now())")
            for statement in (_LEADS, _MESSAGES, _CAMPAIGNS, _RECIPIENTS, "ANALYZE"):
                await seeding.execute(statement)
        finally:
            await seeding.close()
        data = PiccoloPersonalData(db)
        exports: list[float] = []
        erasures: list[float] = []
        for n in range(1, 8):
            person = DataSubject.of(f"p{n * 777}@example.com")
            started = time.perf_counter()
            found = await data.export("acc_b", person)
            exports.append(time.perf_counter() - started)
            started = time.perf_counter()
            erased = await data.erase("acc_b", person)
            erasures.append(time.perf_counter() - started)
            assert (len(found.messages), len(found.recipients)) == (10, 10)
            assert (erased.messages, erased.campaign_recipients, erased.leads) == (10, 10, 1)
    print("privacy: 1,000,000 messages, 1,000,000 campaign recipients, 100,000 leads")
    print(f"  export: median {statistics.median(exports) * 1000:.0f} ms of 7")
    print(f"  erase:  median {statistics.median(erasures) * 1000:.0f} ms of 7")


def main() -> None:
    server = sys.argv[1] if len(sys.argv) > 1 else SERVER
    with fresh_database(server, "leadmail_privacy") as url:
        print(f"on {database_name(url)}")
        asyncio.run(measure(url))


if __name__ == "__main__":
    main()
