"""GET /health and GET /ready: no key, the envelope, out of the API's document."""

from __future__ import annotations

from typing import Any

from litestar.testing import AsyncTestClient

from leadmail.bootstrap import Adapters
from tests.api.support import Api, Client, app_with_key
from tests.support.envelope import bearer


async def test_health_answers_without_a_key(api: Api) -> None:
    response = await api.client.get("/health")

    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "message": "Alive",
        "error": "",
        "data": {"status": "ok"},
    }


async def test_ready_once_started(api: Api) -> None:
    response = await api.client.get("/ready")

    assert response.status_code == 200
    assert response.json()["data"] == {"status": "ready"}


async def test_ready_is_503_with_the_reason_before_the_start_up_work() -> None:
    # The app's lifespan (its start-up work) not run: as while a server waits for its
    # database's migrations.
    app, _, key = await app_with_key(Adapters.in_memory())
    client: Client = AsyncTestClient(app)

    ready = await client.get("/ready")
    leads = await client.get("/api/v1/leads", headers=bearer(key.secret))
    health = await client.get("/health")

    assert ready.status_code == 503
    assert ready.headers["retry-after"] == "1"
    assert ready.json() == {
        "success": False,
        "message": "Not ready",
        "error": "The service is starting",
        "code": "NOT_READY",
    }
    # The API is refused (before the key is even looked up), /health is not.
    assert leads.status_code == 503
    assert leads.json()["code"] == "STORAGE_UNAVAILABLE"
    assert "migrations are not applied yet" in leads.json()["error"]
    assert health.status_code == 200


async def test_neither_is_in_the_api_document(spec: dict[str, Any]) -> None:
    assert "/health" not in spec["paths"]
    assert "/ready" not in spec["paths"]


async def test_a_probe_s_query_is_not_checked(api: Api) -> None:
    # Probes are configured once by operators; an extra parameter is no client's mistake.
    assert (await api.client.get("/health", params={"probe": "k8s"})).status_code == 200
    assert (await api.client.get("/ready", params={"probe": "k8s"})).status_code == 200
