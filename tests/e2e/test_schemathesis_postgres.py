"""The live OpenAPI document against the live server on Postgres, by schemathesis over HTTP.

``leadmail serve --no-worker`` on a fresh Postgres database, with a default sender (so
``from`` may be left out, null or blank), and a key of an account of its own made with
``leadmail keys create``; schemathesis loads /schema/openapi.json from it and runs every
operation with every built-in check (tests/support/schemathesis_run.py: the same run as
tests/api/test_schemathesis.py, whose only hooks are the data a client reads: a template's
variables, from GET /api/v1/email/templates, and an audience that matches a lead, the one
added here). No worker runs: queued imports and campaigns wait, so the run's cost is the
server's answers alone. About 1 to 2 minutes.

    .venv/bin/pytest tests/e2e/test_schemathesis_postgres.py
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server import server_with_key
from tests.postgres import fresh_database
from tests.support.schemathesis_run import SCHEMA_PATH, SEED_EMAIL, Catalog, run_schemathesis
from tests.support.tools import require_module

DEFAULT_SENDER = "Academy <hello@academy.example.com>"


@pytest.fixture
async def database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.mark.postgres
def test_the_live_document_holds_on_postgres(database: str, tmp_path: Path) -> None:
    require_module("schemathesis")
    import schemathesis

    env = {"LEADMAIL_EMAIL_DEFAULT_FROM": DEFAULT_SENDER}
    with server_with_key(
        database, tmp_path, extra_env=env, key_first=False, serve_args=["--no-worker"]
    ) as server:
        assert server.primary is not None
        secret = server.primary.secret
        with server.client(secret) as api:
            templates = api.get("/api/v1/email/templates")
            assert templates.status_code == 200, templates.text
            catalog: Catalog = {t["id"]: tuple(t["variables"]) for t in templates.json()["data"]}
            assert catalog, "no template to send"
            # A lead, so that a campaign to every lead (``{}``) has an audience.
            seeded = api.post("/api/v1/leads", json={"name": "Seed", "email": SEED_EMAIL})
            assert seeded.status_code == 200, seeded.text
            seed_lead_id = seeded.json()["data"]["lead_id"]

        def load(config: Any) -> Any:
            return schemathesis.openapi.from_url(server.base_url + SCHEMA_PATH, config=config)

        run = run_schemathesis(load, secret, catalog, seed_lead_id)

    problems = run.report()
    assert not problems, "\n".join(problems)
