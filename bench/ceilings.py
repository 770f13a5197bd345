"""The two ceilings leadmail is measured against: bare Litestar apps, served the same way.

- ``json_app`` (ceiling A): the framework alone. ``POST /echo`` decodes a lead-shaped body
  into a msgspec Struct and answers it in an envelope; ``GET /hello`` answers a constant.
- ``insert_app`` (ceiling B): the framework plus the database for one write. ``POST /leads``
  decodes the same body and runs one asyncpg ``INSERT ... RETURNING`` into the real
  ``leads`` table (same columns, indexes and foreign key as leadmail's), through a pool of
  the size leadmail uses.

No authentication, validation beyond types, logging or error envelope: these are limits,
not services. Served by uvicorn (uvloop, httptools, access log off), one process, e.g.

    BENCH_DATABASE_URL=postgresql://... BENCH_ACCOUNT_ID=acc_... \\
        uvicorn bench.ceilings:insert_app --no-access-log --loop uvloop --http httptools
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import msgspec
from litestar import Litestar, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from leadmail.adapters.db.pool import light_reset
from leadmail.config import Settings


class LeadBody(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    email: str
    source: str = ""
    note: str = ""


class LeadRow(msgspec.Struct):
    lead_id: str
    name: str
    email: str
    source: str
    note: str
    created_at: datetime
    updated_at: datetime


class Envelope(msgspec.Struct):
    success: bool
    message: str
    error: str
    data: object


@get("/hello", sync_to_thread=False)
def hello() -> Envelope:
    return Envelope(success=True, message="Hello", error="", data={"hello": "world"})


@post("/echo", status_code=200, sync_to_thread=False)
def echo(data: JSONBody[LeadBody]) -> Envelope:
    return Envelope(success=True, message="Echo", error="", data=data)


json_app = Litestar(route_handlers=[hello, echo], logging_config=None)


INSERT = """
INSERT INTO leads (lead_id, account_id, name, email, email_key, source, note,
                   created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
RETURNING lead_id, name, email, source, note, created_at, updated_at
"""


async def open_pool() -> asyncpg.Pool:
    """The pool of ceilings B and C: the bounds leadmail gets from LEADMAIL_DB_POOL_MIN/MAX,
    read the same way, and the release leadmail's pool uses (no second query per release)."""
    settings = Settings.from_env()
    return await asyncpg.create_pool(
        os.environ["BENCH_DATABASE_URL"],
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        reset=light_reset,
    )


@contextlib.asynccontextmanager
async def _pool(app: Litestar) -> AsyncIterator[None]:
    pool = await open_pool()
    app.state.pool = pool
    app.state.account_id = os.environ["BENCH_ACCOUNT_ID"]
    try:
        yield
    finally:
        await pool.close()


@post("/leads", status_code=200)
async def insert_lead(data: JSONBody[LeadBody], state: State) -> Envelope:
    email = data.email.strip()
    row = await state.pool.fetchrow(
        INSERT,
        "ld_" + secrets.token_urlsafe(16),
        state.account_id,
        data.name,
        email,
        email.lower(),
        data.source,
        data.note,
        datetime.now(UTC),
    )
    return Envelope(success=True, message="Lead added", error="", data=LeadRow(**dict(row)))


insert_app = Litestar(route_handlers=[insert_lead], lifespan=[_pool], logging_config=None)
