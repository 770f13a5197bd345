"""Ceiling C: what a send must do and nothing more, as a bare Litestar app.

``POST /send`` decodes a send-shaped body, then:

1. one asyncpg ``INSERT`` of the message, pending, into leadmail's ``messages`` table (same
   columns, keys, indexes and foreign key; autocommit, no explicit transaction), with its
   recipient's ``message_addresses`` row in the same statement (issue 27's message log);
2. the plain-text part derived from the HTML, as every send without ``text`` must carry
   one (issue 26): inscriptis' own ``get_text``, its defaults, with none of leadmail's
   rules for links and tables;
3. one httpx ``POST /emails`` to the provider stand-in, Resend's request (JSON body,
   bearer key, the message id as Idempotency-Key, the text part), its answer's ``id``
   read back;
4. one asyncpg ``UPDATE`` of the message to sent, by its primary key.

The UPDATE names the primary key alone (leadmail's also names the account; since the
messages' index by account and time is gone, both find the row by the primary key:
bench/README.md, "Issue 16").

No authentication, validation beyond types, retries, timeouts beyond httpx's, logging or
error envelope: a limit, not a service. The Postgres pool is ceiling B's (leadmail's size,
the light release).

How the provider is called: bench/send_layouts.py (the fastest layout found, by
default).

Served like the other ceilings, e.g.

    BENCH_DATABASE_URL=postgresql://... BENCH_ACCOUNT_ID=acc_... \\
        BENCH_PROVIDER_URL=http://127.0.0.1:PORT BENCH_PROVIDER_KEY=re_... \\
        uvicorn bench.ceiling_send:send_app --no-access-log --loop uvloop --http httptools
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import msgspec
from inscriptis import get_text
from litestar import Litestar, post
from litestar.datastructures import State
from litestar.params import JSONBody

from bench.ceilings import Envelope, open_pool
from bench.send_layouts import Layout, Provider, SendBody

PROVIDER = "resend"


class MessageOut(msgspec.Struct):
    message_id: str
    status: str
    provider: str
    provider_message_id: str
    created_at: datetime
    updated_at: datetime


# With the recipient's row of the message log's address index (issue 27), in the same
# statement, as leadmail writes it.
INSERT = """
WITH added AS (
    INSERT INTO messages (message_id, account_id, sender, recipients, subject, template_id,
                          status, provider, provider_message_id, attempts, last_error,
                          created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, NULL, 'pending', $6, NULL, 0, '', $7, $7)
    RETURNING account_id, created_at, message_id
)
INSERT INTO message_addresses (account_id, address, created_at, message_id)
SELECT account_id, lower($8), created_at, message_id FROM added
"""
UPDATE = """
UPDATE messages SET status = 'sent', attempts = 1, provider_message_id = $2,
                    last_error = '', updated_at = $3
WHERE message_id = $1
"""


@contextlib.asynccontextmanager
async def _resources(app: Litestar) -> AsyncIterator[None]:
    pool = await open_pool()
    provider = Provider(
        os.environ["BENCH_PROVIDER_URL"], os.environ["BENCH_PROVIDER_KEY"], Layout.from_env()
    )
    app.state.pool = pool
    app.state.provider = provider
    app.state.account_id = os.environ["BENCH_ACCOUNT_ID"]
    try:
        yield
    finally:
        await provider.close()
        await pool.close()


@post("/send", status_code=200)
async def send(data: JSONBody[SendBody], state: State) -> Envelope:
    pool, account_id = state.pool, state.account_id
    message_id = "msg_" + secrets.token_urlsafe(16)
    created = datetime.now(UTC)
    await pool.execute(
        INSERT, message_id, account_id, data.sender, json.dumps([data.to]), data.subject,
        PROVIDER, created, data.to,
    )  # fmt: skip
    provider_id = await state.provider.send(data, message_id, get_text(data.html).strip())
    updated = datetime.now(UTC)
    await pool.execute(UPDATE, message_id, provider_id, updated)
    return Envelope(
        success=True,
        message="Email sent",
        error="",
        data=MessageOut(message_id, "sent", PROVIDER, provider_id, created, updated),
    )


send_app = Litestar(route_handlers=[send], lifespan=[_resources], logging_config=None)
