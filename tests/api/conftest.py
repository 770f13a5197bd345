from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.api.dashboard_support import Staff, signed_in_staff
from tests.api.support import Api, open_api


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    async with open_api() as opened:
        yield opened


@pytest.fixture
async def spec(api: Api) -> dict[str, Any]:
    """The served OpenAPI document."""
    response = await api.client.get("/schema/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


@pytest.fixture
async def staff() -> AsyncIterator[Staff]:
    """A dashboard user of the account "acme", signed in on the client."""
    async with signed_in_staff() as signed_in:
        yield signed_in
