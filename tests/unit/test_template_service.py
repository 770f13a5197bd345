"""TemplateService: the predefined templates served from memory, read again after each
sync."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from leadmail.adapters.memory.account_templates import MemoryAccountTemplateRepository
from leadmail.adapters.memory.templates import MemoryTemplateRepository
from leadmail.domain.errors import TemplateNotFound
from leadmail.domain.templates import Template, TemplateSource
from leadmail.services.templates import TemplateService

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
ACCOUNT = "acc_1"


def source(template_id: str, subject: str = "Hello {{first_name}}") -> TemplateSource:
    return TemplateSource(template_id, template_id.title(), subject, "<p>Hi {{first_name}}</p>")


class Catalog:
    def __init__(self, *sources: TemplateSource) -> None:
        self.sources = list(sources)

    def load(self) -> list[TemplateSource]:
        return list(self.sources)


class CountingRepository(MemoryTemplateRepository):
    """The memory repository, counting its reads; a read can be held mid-way."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.hold: asyncio.Event | None = None

    async def list(self) -> list[Template]:
        self.reads += 1
        found = await super().list()
        if self.hold is not None:
            await self.hold.wait()
        return found

    async def get(self, template_id: str) -> Template | None:
        raise AssertionError("the service reads the whole set, once")


def service(repository: CountingRepository, catalog: Catalog) -> TemplateService:
    return TemplateService(
        catalog,
        repository,
        MemoryAccountTemplateRepository(),
        clock=lambda: NOW,
    )


async def test_reads_after_the_first_are_served_from_memory() -> None:
    repository = CountingRepository()
    templates = service(repository, Catalog(source("welcome"), source("reminder")))
    await templates.sync()

    listed = [t.template_id for t in await templates.predefined()]
    again = [t.template_id for t in await templates.predefined()]
    welcome = await templates.get(ACCOUNT, "welcome")

    assert listed == again == ["reminder", "welcome"]
    assert welcome.template_id == "welcome"
    assert repository.reads == 1


async def test_a_sync_is_seen_by_the_next_read() -> None:
    repository = CountingRepository()
    catalog = Catalog(source("welcome"))
    templates = service(repository, catalog)
    await templates.sync()
    assert (await templates.get(ACCOUNT, "welcome")).subject == "Hello {{first_name}}"

    catalog.sources = [source("welcome", subject="Welcome {{first_name}}"), source("reminder")]
    await templates.sync()

    assert (await templates.get(ACCOUNT, "welcome")).subject == "Welcome {{first_name}}"
    assert [t.template_id for t in await templates.predefined()] == ["reminder", "welcome"]
    assert repository.reads == 2


async def test_an_unknown_template_is_not_found_from_memory_too() -> None:
    repository = CountingRepository()
    templates = service(repository, Catalog(source("welcome")))
    await templates.sync()
    await templates.predefined()

    with pytest.raises(TemplateNotFound):
        await templates.get(ACCOUNT, "welcom")
    assert repository.reads == 1


async def test_a_read_that_began_before_a_sync_does_not_keep_what_it_read() -> None:
    repository = CountingRepository()
    catalog = Catalog(source("welcome"))
    templates = service(repository, catalog)
    await templates.sync()
    repository.hold = asyncio.Event()
    slow_read = asyncio.create_task(templates.predefined())
    await asyncio.sleep(0)  # the read has the old set and waits

    catalog.sources = [source("reminder")]
    await templates.sync()
    repository.hold.set()
    old = await slow_read
    repository.hold = None

    assert [t.template_id for t in old] == ["welcome"]  # it answered what it read...
    assert [t.template_id for t in await templates.predefined()] == ["reminder"]  # ...not kept


class FailingRepository(CountingRepository):
    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        await super().sync(sources[:1], now)
        raise OSError("the database went away mid-sync")


async def test_a_failed_sync_still_drops_the_snapshot() -> None:
    repository = FailingRepository()
    catalog = Catalog(source("welcome"))
    templates = service(repository, catalog)
    with pytest.raises(OSError, match="mid-sync"):
        await templates.sync()
    assert [t.template_id for t in await templates.predefined()] == ["welcome"]

    catalog.sources = [source("a-first"), source("welcome")]
    with pytest.raises(OSError, match="mid-sync"):
        await templates.sync()  # wrote a part ("a-first") before failing

    assert [t.template_id for t in await templates.predefined()] == ["a-first"]
