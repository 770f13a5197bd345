"""Helpers for the in-process API tests: an app on memory adapters, a client, keys, and
request bodies. What a response must look like is in tests/support/envelope.py."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.application import create_app
from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.domain.leads import Lead, new_lead_id
from leadmail.domain.pacing import email_lane
from leadmail.services.keys import CreatedKey
from leadmail.services.registry import Services
from tests.support.catalog import WELCOME_VARIABLES
from tests.support.envelope import IMPORTS, LEADS, bearer

SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Far enough in the past that anything the service stamps "now" is later.
EPOCH = datetime(2020, 1, 1, 12, 0, tzinfo=UTC)
HELD_S = 3600.0  # the provider's lane, held while an app of the API tests runs

Client = AsyncTestClient[Litestar]


@dataclass(frozen=True)
class Api:
    """One app on one set of adapters, a client for it, and a key of the account "acme"."""

    adapters: Adapters
    services: Services
    client: Client
    key: CreatedKey

    @property
    def auth(self) -> dict[str, str]:
        return bearer(self.key.secret)

    @property
    def account_id(self) -> str:
        return self.key.key.account_id

    async def add_lead(self, headers: dict[str, str] | None = None, **fields: Any) -> Any:
        """POST a lead that must be accepted; returns its ``data``."""
        body = {"name": "Ada Lovelace", "email": "ada@example.com", **fields}
        response = await self.client.post(LEADS, json=body, headers=headers or self.auth)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    async def all_leads(self, headers: dict[str, str] | None = None) -> list[Any]:
        """Every lead the key's account can see, by walking every page."""
        items: list[Any] = []
        cursor: str | None = None
        while True:
            params = {"limit": "100"} if cursor is None else {"limit": "100", "cursor": cursor}
            response = await self.client.get(LEADS, params=params, headers=headers or self.auth)
            assert response.status_code == 200, response.text
            page = response.json()["data"]
            items.extend(page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                return items

    async def import_csv(
        self, text: str | bytes, params: dict[str, str] | None = None, **kwargs: Any
    ) -> Any:
        """POST a CSV file (the body) that must be taken; its import, once finished."""
        body = text.encode() if isinstance(text, str) else text
        response = await self.client.post(
            IMPORTS,
            content=body,
            params=params or {},
            headers={**self.auth, "Content-Type": "text/csv"},
            **kwargs,
        )
        assert response.status_code == 202, response.text
        return await self.finished_import(response.json()["data"]["id"])

    async def finished_import(self, import_id: str) -> Any:
        """The import once done or failed (the app runs it in its own event loop)."""
        for _ in range(1_000):
            response = await self.client.get(f"{IMPORTS}/{import_id}", headers=self.auth)
            assert response.status_code == 200, response.text
            found = response.json()["data"]
            if found["status"] in ("done", "failed"):
                return found
            await asyncio.sleep(0.01)
        raise AssertionError(f"import {import_id} still {found['status']} after 10 s")

    async def seed(
        self,
        *,
        name: str = "Seeded",
        email: str,
        source: str = "",
        note: str = "",
        created_at: datetime = EPOCH,
        account_id: str | None = None,
    ) -> Lead:
        """Store a lead straight through the repository, with a chosen creation time."""
        lead = Lead(
            lead_id=new_lead_id(),
            account_id=account_id or self.account_id,
            name=name,
            email=email,
            source=source,
            note=note,
            phone="",
            created_at=created_at,
            updated_at=created_at,
        )
        return await self.adapters.leads.add(lead)


def memory_with(**parts: Any) -> Adapters:
    """The in-memory adapters, with some replaced (a failing repository, say)."""
    return dataclasses.replace(Adapters.in_memory(), **parts)


async def app_with_key(
    adapters: Adapters, settings: Settings | None = None
) -> tuple[Litestar, Services, CreatedKey]:
    """The app on ``adapters``, its services, and a key of the account "acme". Nothing is
    started: ``open_api`` runs it under a test client, other tools drive it themselves."""
    services = wire(adapters)
    key = await services.keys.create("acme")
    # Campaigns made over the API stay as the tests make them: their sender (which runs in
    # the app, as in `leadmail serve`) waits for the provider's lane, held. Sending is
    # tested in tests/unit/test_campaign_runner.py and tests/e2e/test_campaigns.py.
    await adapters.limiter.hold(email_lane(adapters.provider.name), HELD_S)
    app = create_app(settings or Settings(migrate_on_start=False), adapters)
    return app, services, key


@contextlib.asynccontextmanager
async def open_api(
    adapters: Adapters | None = None, settings: Settings | None = None
) -> AsyncIterator[Api]:
    adapters = adapters or Adapters.in_memory()
    app, services, key = await app_with_key(adapters, settings)
    async with AsyncTestClient(app) as client:
        yield Api(adapters=adapters, services=services, client=client, key=key)


def minutes(n: int) -> timedelta:
    return timedelta(minutes=n)


# --- email ---------------------------------------------------------------------------

SENDER = "school@example.com"


def recorder(api: Api) -> RecordingEmailProvider:
    """The app's email provider: the memory adapters' RecordingEmailProvider."""
    sender = api.adapters.provider
    assert isinstance(sender, RecordingEmailProvider)
    return sender


def email_settings(**fields: Any) -> Settings:
    """Settings for an in-memory app with some email knobs changed."""
    return Settings(migrate_on_start=False, **fields)


async def account_auth(api: Api, account_id: str) -> dict[str, str]:
    """The Authorization header of a new key of another account."""
    created = await api.services.keys.create(account_id)
    assert created.key.account_id != api.account_id
    return bearer(created.secret)


def plain_email(**fields: Any) -> dict[str, Any]:
    """A valid body for POST /email/send, with some fields replaced (None drops one)."""
    body: dict[str, Any] = {
        "to": "ada@example.com",
        "subject": "Your course starts Monday",
        "from": SENDER,
        "html": "<p>See you on Monday.</p>",
        **fields,
    }
    return {name: value for name, value in body.items() if value is not None}


def welcome_email(**fields: Any) -> dict[str, Any]:
    """A valid body for POST /email/template with the "welcome" template (None drops one)."""
    body: dict[str, Any] = {
        "to": ["ada@example.com"],
        "template_id": "welcome",
        "variables": dict(WELCOME_VARIABLES),
        "from": SENDER,
        **fields,
    }
    return {name: value for name, value in body.items() if value is not None}


def resolve_ref(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI schema, its ``$ref`` (if any) followed into components."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    assert ref.startswith("#/components/schemas/")
    resolved: dict[str, Any] = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return resolved


def json_schema_of(spec: dict[str, Any], holder: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a request body or response in ``spec``."""
    return resolve_ref(spec, holder["content"]["application/json"]["schema"])
