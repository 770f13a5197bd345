"""The composition root: adapters from settings, services from adapters, the app from both."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib.metadata import version

from litestar import Litestar

from leadmail.adapters.db.engine import Database
from leadmail.adapters.db.keys import PiccoloApiKeyStore
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.migrate import migrate
from leadmail.adapters.http.app import build_app
from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.config import Settings
from leadmail.domain.clock import Clock, utc_now
from leadmail.ports.keys import ApiKeyStore
from leadmail.ports.leads import LeadRepository
from leadmail.services.keys import ApiKeyService, CreatedKey
from leadmail.services.leads import LeadService
from leadmail.services.registry import Services

DEMO_ACCOUNT = "demo"


@dataclass
class Adapters:
    leads: LeadRepository
    keys: ApiKeyStore
    database: Database | None = None

    @classmethod
    def in_memory(cls) -> Adapters:
        return cls(leads=MemoryLeadRepository(), keys=MemoryApiKeyStore())

    @classmethod
    def from_settings(cls, settings: Settings) -> Adapters:
        database = Database.from_url(
            settings.database_url,
            pool_min=settings.db_pool_min,
            pool_max=settings.db_pool_max,
            connect_timeout=settings.db_connect_timeout,
            command_timeout=settings.db_command_timeout,
        )
        return cls(
            leads=PiccoloLeadRepository(database),
            keys=PiccoloApiKeyStore(database),
            database=database,
        )

    @contextlib.asynccontextmanager
    async def opened(self, *, apply_migrations: bool) -> AsyncIterator[Adapters]:
        if self.database is None:
            yield self
            return
        async with self.database.running():
            if apply_migrations:
                await migrate(self.database)
            yield self


def wire(adapters: Adapters, clock: Clock = utc_now) -> Services:
    return Services(
        leads=LeadService(adapters.leads, clock),
        keys=ApiKeyService(adapters.keys, clock),
    )


async def ensure_demo_key(services: Services) -> CreatedKey | None:
    """On an empty embedded database, mint a key so a newcomer can try the API at once."""
    if await services.keys.any_key_exists():
        return None
    return await services.keys.create(DEMO_ACCOUNT, "created on first start")


def create_app(
    settings: Settings,
    adapters: Adapters | None = None,
    *,
    on_ready: Callable[[Services], contextlib.AbstractAsyncContextManager[None]] | None = None,
) -> Litestar:
    """The whole service as one ASGI app. Adapters open in the app's lifespan."""
    adapters = adapters if adapters is not None else Adapters.from_settings(settings)
    services = wire(adapters)

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        async with adapters.opened(apply_migrations=settings.migrate_on_start):
            if on_ready is None:
                yield
            else:
                async with on_ready(services):
                    yield

    return build_app(
        services,
        version=version("leadmail"),
        max_body_bytes=settings.max_body_bytes,
        lifespan=[lifespan],
    )
