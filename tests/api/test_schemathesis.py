"""The OpenAPI document against the server that serves it, by schemathesis.

Every operation of the live document (/schema/openapi.json of the app on memory adapters,
as tests/api/support.py builds it, with no default sender: ``from`` is required), every
built-in check, the positive-data acceptance check among them ("a request the document
calls valid is accepted"), with a real key, through tests/support/schemathesis_run.py
(called on the ASGI app directly: ``schemathesis.openapi.from_asgi``). Its only hooks are
the data a client reads from the service (a template's variables, an audience that matches
a lead; see that module's docstring); every other request, an import's file among them,
goes as generated. 10 to 60 s, by the seed.

    .venv/bin/pytest tests/api/test_schemathesis.py

tests/e2e/test_schemathesis_postgres.py runs the same over HTTP against ``leadmail serve``
on Postgres, with a default sender.

Here, and not in tests/contract/ (one suite per port, run over every adapter): this tests
the Litestar app in-process, which is what tests/api/ does.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from litestar import Litestar

from leadmail.bootstrap import Adapters
from leadmail.domain.leads import LeadFields
from tests.api.support import app_with_key
from tests.support.schemathesis_run import (
    SCHEMA_PATH,
    SEED_EMAIL,
    Catalog,
    Run,
    run_schemathesis,
)
from tests.support.tools import require_module


def run_in_process(app: Litestar, secret: str, catalog: Catalog, seed_lead_id: str) -> Run:
    import schemathesis
    from schemathesis.python.asgi import shutdown_lifespans

    def load(config: Any) -> Any:
        return schemathesis.openapi.from_asgi(SCHEMA_PATH, app, config=config)

    try:
        return run_schemathesis(load, secret, catalog, seed_lead_id)
    finally:
        shutdown_lifespans()  # the app's lifespan, which from_asgi started


async def test_the_document_holds_for_every_operation_and_check() -> None:
    require_module("schemathesis")
    app, services, key = await app_with_key(Adapters.in_memory())
    await services.templates.sync()  # as the app's start does; then read as a client would
    catalog = {t.template_id: t.variables for t in await services.templates.predefined()}
    assert catalog, "no template to send"
    # A lead, so that a campaign to every lead (``{}``) has an audience.
    seed = await services.leads.add(
        key.key.account_id, LeadFields.parse(name="Seed", email=SEED_EMAIL)
    )

    # CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per
    # thread (python/cpython#106905): anyio builds its lazy imports by parsing its own
    # source when its backend is first loaded, which here would be in the app's thread
    # (the first file upload) while hypothesis parses in the run's, and one of them fails
    # with "AST constructor recursion depth mismatch". So it is loaded before the run.
    importlib.import_module("anyio.abc")
    importlib.import_module("anyio._backends._asyncio")
    run = await asyncio.to_thread(run_in_process, app, key.secret, catalog, seed.lead_id)

    problems = run.report()
    assert not problems, "\n".join(problems)
