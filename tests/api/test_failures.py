"""Failures of the service's own parts: a crash is a 500 with a request id and nothing
more; a storage outage is a 503 the client may retry."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.keys import ApiKey
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import TagChange
from leadmail.ports.errors import StorageUnavailable
from tests.api.support import memory_with, open_api
from tests.support.envelope import LEADS, assert_error, assert_ok

SECRET_MESSAGE = "boom secret"


class CrashingLeads(MemoryLeadRepository):
    async def add(self, lead: Lead) -> Lead:
        raise RuntimeError(SECRET_MESSAGE)


class UnavailableLeads(MemoryLeadRepository):
    """The database is down for every operation."""

    async def add(self, lead: Lead) -> Lead:
        raise StorageUnavailable()

    async def get(self, account_id: str, lead_id: str) -> Lead | None:
        raise StorageUnavailable()

    async def replace(self, lead: Lead, expected: Lead | None = None) -> Lead | None:
        raise StorageUnavailable()

    async def update(
        self, account_id: str, lead_id: str, change: Callable[[Lead], Lead]
    ) -> Lead | None:
        raise StorageUnavailable()

    async def change_tags(
        self, account_id: str, lead_id: str, change: TagChange, now: datetime
    ) -> Lead | None:
        raise StorageUnavailable()

    async def count(
        self, account_id: str, segment: LeadFilter, *, at_most: int | None = None
    ) -> int:
        raise StorageUnavailable()

    async def delete(self, account_id: str, lead_id: str) -> bool:
        raise StorageUnavailable()

    async def list(self, account_id: str, query: LeadQuery) -> list[Lead]:
        raise StorageUnavailable()


class UnavailableKeys(MemoryApiKeyStore):
    async def find_by_digest(self, digest: str) -> ApiKey | None:
        raise StorageUnavailable()


class CrashingKeys(MemoryApiKeyStore):
    async def find_by_digest(self, digest: str) -> ApiKey | None:
        raise RuntimeError(SECRET_MESSAGE)

    async def touch(self, key_id: str, now: datetime) -> None:
        raise RuntimeError(SECRET_MESSAGE)


ENDPOINTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", LEADS, None),
    ("POST", LEADS, {"name": "Ada", "email": "ada@example.com"}),
    ("GET", LEADS + "/ld_x", None),
    ("PUT", LEADS + "/ld_x", {"note": "n"}),
    ("DELETE", LEADS + "/ld_x", None),
    ("GET", LEADS + "/count", None),
    ("POST", LEADS + "/ld_x/tags", {"add": ["vip"]}),
]


def _no_internals(text: str) -> None:
    assert SECRET_MESSAGE not in text
    assert "Traceback" not in text
    assert "RuntimeError" not in text
    assert ".py" not in text


async def test_an_unexpected_error_is_a_500_with_the_request_id_and_no_details() -> None:
    async with open_api(memory_with(leads=CrashingLeads(), keys=MemoryApiKeyStore())) as api:
        response = await api.client.post(
            LEADS, json={"name": "Ada", "email": "ada@example.com"}, headers=api.auth
        )

        body = assert_error(response, 500, "INTERNAL_ERROR")
        assert body["data"]["request_id"]
        assert body["data"]["request_id"] == response.headers["x-request-id"]
        assert body["data"]["request_id"] in body["error"]
        _no_internals(response.text)


async def test_a_500_carries_the_clients_own_request_id() -> None:
    async with open_api(memory_with(leads=CrashingLeads(), keys=MemoryApiKeyStore())) as api:
        response = await api.client.post(
            LEADS,
            json={"name": "Ada", "email": "ada@example.com"},
            headers={**api.auth, "X-Request-ID": "client-req-42"},
        )

        body = assert_error(response, 500, "INTERNAL_ERROR")
        assert body["data"]["request_id"] == "client-req-42"
        assert response.headers["x-request-id"] == "client-req-42"


async def test_the_app_keeps_serving_after_a_500() -> None:
    async with open_api(memory_with(leads=CrashingLeads(), keys=MemoryApiKeyStore())) as api:
        crashed = await api.client.post(
            LEADS, json={"name": "Ada", "email": "ada@example.com"}, headers=api.auth
        )
        assert_error(crashed, 500, "INTERNAL_ERROR")

        assert_ok(await api.client.get(LEADS, headers=api.auth))


@pytest.mark.parametrize(
    ("method", "path", "body"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _ in ENDPOINTS]
)
async def test_storage_unavailable_is_503_with_retry_after(
    method: str, path: str, body: dict[str, Any] | None
) -> None:
    async with open_api(memory_with(leads=UnavailableLeads(), keys=MemoryApiKeyStore())) as api:
        response = await api.client.request(method, path, json=body, headers=api.auth)

        assert_error(response, 503, "STORAGE_UNAVAILABLE")
        assert int(response.headers["retry-after"]) > 0


async def test_a_key_store_outage_is_503_not_401() -> None:
    async with open_api(memory_with(leads=MemoryLeadRepository(), keys=UnavailableKeys())) as down:
        response = await down.client.get(LEADS, headers=down.auth)

        assert_error(response, 503, "STORAGE_UNAVAILABLE")
        assert "retry-after" in response.headers
        assert "www-authenticate" not in response.headers


async def test_a_key_store_crash_is_500_not_401() -> None:
    async with open_api(memory_with(leads=MemoryLeadRepository(), keys=CrashingKeys())) as api:
        response = await api.client.get(LEADS, headers=api.auth)

        body = assert_error(response, 500, "INTERNAL_ERROR")
        assert body["data"]["request_id"] == response.headers["x-request-id"]
        _no_internals(response.text)
