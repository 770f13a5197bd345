from __future__ import annotations

from datetime import timedelta

import pytest

from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.services.keys import ApiKeyService
from leadmail.services.leads import LeadService
from tests.unit.fakes import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """Moves one second per reading, so every lead gets its own distinct created_at."""
    return FakeClock(tick=timedelta(seconds=1))


@pytest.fixture
def lead_repository() -> MemoryLeadRepository:
    return MemoryLeadRepository()


@pytest.fixture
def lead_service(lead_repository: MemoryLeadRepository, clock: FakeClock) -> LeadService:
    return LeadService(lead_repository, MemoryLeadEventRepository(lead_repository), clock=clock)


@pytest.fixture
def key_store() -> MemoryApiKeyStore:
    return MemoryApiKeyStore()


@pytest.fixture
def key_clock() -> FakeClock:
    """Stands still: key tests move time explicitly."""
    return FakeClock()


@pytest.fixture
def key_service(key_store: MemoryApiKeyStore, key_clock: FakeClock) -> ApiKeyService:
    return ApiKeyService(key_store, clock=key_clock)
