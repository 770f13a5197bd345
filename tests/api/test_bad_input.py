"""Nothing a client sends answers 500 (issue 24): a NUL in a path id, a number past a
double in a segment, JSON nested too deep, an empty filter list, unknown query
parameters; each is a 4xx in the envelope, on every route that could take it (enumerated
from the app's own routes, so a new route is covered), and on every database where the
database is what failed."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute

from leadmail.adapters.http.dashboard.security import DASHBOARD
from leadmail.adapters.http.health import HEALTH, READY
from leadmail.adapters.http.json_depth import MAX_JSON_DEPTH
from leadmail.adapters.http.metrics import METRICS
from leadmail.adapters.http.unsubscribe_pages import UNSUBSCRIBE
from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.bootstrap import Adapters
from leadmail.config import Settings
from leadmail.domain.campaigns import CAMPAIGN_ID_PREFIX
from leadmail.domain.email import MESSAGE_ID_PREFIX
from leadmail.domain.lead_actions import ACTION_ID_PREFIX
from leadmail.domain.lead_imports import IMPORT_ID_PREFIX
from leadmail.domain.leads import LEAD_ID_PREFIX
from tests.api.campaign_support import campaign_body
from tests.api.support import Api, open_api
from tests.postgres import fresh_migrated_database
from tests.support.envelope import CAMPAIGNS, LEADS, assert_error, assert_invalid

PREFIXES = {
    "lead_id": LEAD_ID_PREFIX,
    "message_id": MESSAGE_ID_PREFIX,
    "import_id": IMPORT_ID_PREFIX,
    "action_id": ACTION_ID_PREFIX,
    "campaign_id": CAMPAIGN_ID_PREFIX,
    "email": "ada@example.com",  # a suppressed address (DELETE /api/v1/suppressions/{email})
    "template_id": "welcome-",  # template ids have no prefix
    "version": "1",
}
PARAMETER = re.compile(r"\{(\w+):\w+\}")
DOCUMENT = "/schema"

# A body each route with one takes (so only what the test changes is wrong).
BODIES: dict[tuple[str, str], Any] = {
    ("PUT", "/api/v1/leads/{lead_id:str}"): {"note": "n"},
    ("POST", "/api/v1/leads/{lead_id:str}/tags"): {"add": ["x"]},
    ("PUT", "/api/v1/email/templates/{template_id:str}"): {"name": "n"},
    ("POST", "/api/v1/email/templates/{template_id:str}/test"): {"to": "ada@example.com"},
    ("POST", "/api/v1/email/templates/{template_id:str}/preview"): {},
}


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(kind, where): the Postgres server's URL, the SQLite file's, or none. (A plain
    fixture: the Postgres one is asked for here, as tests/contract/conftest.py does.)"""
    if request.param == "postgres":
        server: str = request.getfixturevalue("postgres_server")
        return "postgres", server
    if request.param == "sqlite":
        return "sqlite", f"sqlite:///{tmp_path / 'leadmail.db'}"
    return "memory", ""


@pytest.fixture
async def stored_api(database: tuple[str, str]) -> AsyncIterator[Api]:
    """The app on the memory adapters, on SQLite, and on a Postgres database of its own
    (the app writes its templates: not into the session's shared database). Jobs run in
    process: these tests queue none."""
    kind, where = database
    if kind == "memory":
        async with open_api() as api:
            yield api
        return
    async with contextlib.AsyncExitStack() as stack:
        url = where
        if kind == "postgres":
            url = await stack.enter_async_context(fresh_migrated_database(where))
        settings = Settings(migrate_on_start=False, database_url=url)
        adapters = dataclasses.replace(Adapters.from_settings(settings), jobs=InProcessJobQueue())
        await stack.enter_async_context(adapters.opened(apply_migrations=True))
        yield await stack.enter_async_context(open_api(adapters, settings))


def routes(app: Litestar) -> list[tuple[str, str, Any]]:
    """Every (method, path template, handler) of the API: not the document's, not the
    unsubscribe pages' (HTML for people, no key, no query check by design: held in
    tests/api/test_unsubscribe_pages.py), not /health, /ready and /metrics (probes and
    scrapers, no key, no query check: tests/api/test_health.py), not the dashboard's
    (pages for signed-in people: tests/api/test_dashboard.py), not OPTIONS."""
    return [
        (method, route.path, handler)
        for route in app.routes
        if isinstance(route, HTTPRoute)
        and not route.path.startswith((DOCUMENT, UNSUBSCRIBE, HEALTH, READY, METRICS, DASHBOARD))
        for method, (handler, _) in route.route_handler_map.items()
        if method != "OPTIONS"
    ]


def filled(path: str, value: str = "{prefix}x", only: str | None = None) -> str:
    """The path template with each id of the right shape (or ``value``: every id's, or
    ``only`` that one's, the others' of the right shape)."""

    def one(m: re.Match[str]) -> str:
        shown = value if only in (None, m[1]) else "{prefix}x"
        if m[1] == "version":  # a number: its own shape
            return shown.format(prefix="1").replace("1x", "1")
        return shown.format(prefix=PREFIXES[m[1]])

    return PARAMETER.sub(one, path)


async def test_a_nul_in_any_path_id_is_422_naming_it_on_every_database(
    stored_api: Api,
) -> None:
    by_id = [(m, p) for m, p, _ in routes(stored_api.client.app) if PARAMETER.search(p)]
    assert len(by_id) >= 14  # leads (4), a message, imports (2), campaigns (6), suppressions

    for method, path in by_id:
        for name in PARAMETER.findall(path):
            for bad in ("{prefix}%00", "{prefix}a%00b", "%00"):
                response = await stored_api.client.request(
                    method,
                    filled(path, bad, only=name),
                    json=BODIES.get((method, path)),
                    headers=stored_api.auth,
                )
                assert_invalid(response, name)


async def test_an_id_of_the_wrong_shape_is_422_and_of_the_right_shape_404(api: Api) -> None:
    for bad in ("ld_", "ld_" + "x" * 38, "ld_a.b", "ld_%E2%80%AE", "nope"):
        assert_invalid(await api.client.get(f"{LEADS}/{bad}", headers=api.auth), "lead_id")
    assert_error(
        await api.client.get(f"{LEADS}/ld_missing", headers=api.auth), 404, "LEAD_NOT_FOUND"
    )


@pytest.mark.parametrize("where", ["", "/count", "/export"])
async def test_a_field_number_past_a_double_is_422_naming_it_on_every_database(
    stored_api: Api, where: str
) -> None:
    for number in ("9" * 309, "-" + "9" * 400, "1" + "0" * 999):
        response = await stored_api.client.get(
            f"{LEADS}{where}", params={"field.age": number}, headers=stored_api.auth
        )
        body = assert_invalid(response, "field.age")
        assert "too large" in body["error"]


async def test_a_large_integer_within_a_double_is_still_a_filter(stored_api: Api) -> None:
    # 20 digits: past SQLite's 64-bit integers, within a double: a filter, matching nothing.
    response = await stored_api.client.get(
        f"{LEADS}/count", params={"field.age": "9" * 20}, headers=stored_api.auth
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"count": 0}


async def test_json_nested_past_the_limit_is_400_malformed_on_every_json_route(
    api: Api,
) -> None:
    with_body = [
        (method, path)
        for method, path, handler in routes(api.client.app)
        if "data" in handler.parsed_fn_signature.parameters
    ]
    assert len(with_body) >= 7  # leads (3), sends (3), campaigns (1)
    deep = ("[" * 1000 + "]" * 1000).encode()
    for method, path in with_body:
        response = await api.client.request(
            method,
            filled(path),
            content=deep,
            headers={**api.auth, "Content-Type": "application/json"},
        )
        body = assert_error(response, 400, "MALFORMED_JSON")
        assert str(MAX_JSON_DEPTH) in body["error"]


async def test_json_nested_to_the_limit_is_read_as_usual(api: Api) -> None:
    # An object 64 deep is decoded, and refused for what it is: a wrong type of `name`.
    nested = '{"a":' * (MAX_JSON_DEPTH - 1) + "1" + "}" * (MAX_JSON_DEPTH - 1)
    body = f'{{"name": {nested}, "email": "ada@example.com"}}'.encode()
    response = await api.client.post(
        LEADS, content=body, headers={**api.auth, "Content-Type": "application/json"}
    )
    assert_invalid(response, "name")


@pytest.mark.parametrize("name", ["tag", "any_tag", "not_tag"])
async def test_an_empty_list_in_an_audience_filter_is_422_and_nothing_is_created(
    api: Api, name: str
) -> None:
    await api.add_lead(tags=["march"])

    response = await api.client.post(
        CAMPAIGNS, json=campaign_body(audience={name: []}), headers=api.auth
    )

    assert_invalid(response, f"audience.{name}")
    listed = await api.client.get(CAMPAIGNS, headers=api.auth)
    assert listed.json()["data"]["items"] == []


async def test_unknown_query_parameters_are_422_naming_them_on_every_route(api: Api) -> None:
    every = routes(api.client.app)
    assert len(every) >= 20
    for method, path, _ in every:
        response = await api.client.request(
            method, filled(path), params={"colour": "red"}, headers=api.auth
        )
        body = assert_invalid(response, "colour")
        assert "is not a parameter" in body["error"], (method, path)


async def test_every_unknown_parameter_is_named_and_known_ones_still_work(api: Api) -> None:
    response = await api.client.get(
        CAMPAIGNS, params={"limit": "5", "colour": "red", "size": "9"}, headers=api.auth
    )
    body = assert_invalid(response, "colour")
    assert {e["field"] for e in body["data"]["errors"]} == {"colour", "size"}
    assert "`cursor`, `limit`" in body["error"]
    listed = await api.client.get(
        LEADS, params={"limit": "5", "tag": "x", "field.city": "Leeds"}, headers=api.auth
    )
    assert listed.status_code == 200, listed.text
    # A browser's CORS preflight carries the query its request will: not refused.
    preflight = await api.client.options(CAMPAIGNS, params={"colour": "red"})
    assert preflight.status_code == 200, preflight.text
