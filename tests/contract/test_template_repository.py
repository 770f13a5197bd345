"""The TemplateRepository contract (ports/templates.py), run against every adapter.

Templates are shared by every account: on the session's Postgres database each test starts
with an empty catalog synced (which also removes the versions earlier tests made).
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime

import pytest

from leadmail.domain.templates import Template, TemplateSource
from tests.contract.support import T0, Storage, is_utc, moment

WELCOME = TemplateSource(
    template_id="welcome",
    name="Welcome",
    subject="Welcome, {{first_name}}",
    body="<p>Hello {{ first_name }}, welcome to {{course}}.</p>",
)
REMINDER = TemplateSource(
    template_id="class-reminder",
    name="Class reminder",
    subject="{{course}} starts soon",
    body="<p>See you at {{time}}.</p>",
)
RECEIPT = TemplateSource(
    template_id="receipt_2",
    name="Receipt",
    subject="Your receipt",
    body="<p>Thanks for your payment of {{amount}}.</p>",
)


def stored(
    source: TemplateSource, created_at: datetime, *, version: int = 1, at: datetime | None = None
) -> Template:
    """The template a sync stores: version ``version``, made ``at`` (its first, at
    ``created_at``)."""
    return Template(
        template_id=source.template_id,
        name=source.name,
        subject=source.subject,
        body=source.body,
        created_at=created_at,
        version=version,
        updated_at=created_at if at is None else at,
    )


async def updated_at(storage: Storage, template_id: str) -> datetime:
    """When the stored template last changed (its current version was made)."""
    template = await storage.templates.get(template_id)
    assert template is not None
    return template.changed_at


class TestTemplateRepositoryContract:
    @pytest.fixture(autouse=True)
    async def _no_templates(self, storage: Storage) -> None:
        """The session's Postgres database holds what earlier tests synced, with their
        versions: each test starts from none."""
        await storage.templates.sync([], T0)

    async def test_sync_stores_every_template_listed_by_id(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME, REMINDER, RECEIPT], T0)

        listed = await storage.templates.list()

        assert listed == [stored(REMINDER, T0), stored(RECEIPT, T0), stored(WELCOME, T0)]
        assert all(is_utc(t.created_at) for t in listed)
        assert listed[0].created_at.isoformat() == "2026-11-22T10:15:30.123000+00:00"
        assert await updated_at(storage, "welcome") == T0

    async def test_get_returns_one_template_or_none(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME, REMINDER], T0)

        assert await storage.templates.get("welcome") == stored(WELCOME, T0)
        assert await storage.templates.get("no-such-template") is None

    async def test_text_is_kept_exactly(self, storage: Storage) -> None:
        source = TemplateSource(
            template_id="zoe",
            name="Zoë's «special» offer — 100% off",
            subject="Hi {{name}} ✓ ' \" \\ %_",
            body="<p>Line one\r\nLine two\ttab &amp; <b>bold</b></p>\n" + "x" * 100_000,
        )

        await storage.templates.sync([source], T0)

        assert await storage.templates.get("zoe") == stored(source, T0)

    async def test_a_changed_template_is_updated_and_keeps_created_at(
        self, storage: Storage
    ) -> None:
        await storage.templates.sync([WELCOME, REMINDER], T0)
        later = moment(60_000)
        renamed = dataclasses.replace(WELCOME, name="Welcome (new)")
        new_subject = dataclasses.replace(REMINDER, subject="Reminder: {{course}}")

        await storage.templates.sync([renamed, new_subject], later)

        assert await storage.templates.list() == [
            stored(new_subject, T0, version=2, at=later),
            stored(renamed, T0, version=2, at=later),
        ]
        assert await updated_at(storage, "welcome") == later
        assert await updated_at(storage, "class-reminder") == later

    async def test_a_changed_body_alone_is_a_change(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME], T0)
        edited = dataclasses.replace(WELCOME, body=WELCOME.body + "<p>P.S.</p>")

        await storage.templates.sync([edited], moment(1000))

        assert await storage.templates.get("welcome") == stored(
            edited, T0, version=2, at=moment(1000)
        )
        assert await updated_at(storage, "welcome") == moment(1000)

    async def test_unchanged_templates_are_left_untouched(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME, REMINDER], T0)
        edited = dataclasses.replace(REMINDER, body="<p>Moved to {{time}}.</p>")

        await storage.templates.sync([WELCOME, edited], moment(5000))

        assert await updated_at(storage, "welcome") == T0
        assert await updated_at(storage, "class-reminder") == moment(5000)

    async def test_templates_no_longer_in_the_catalog_are_removed(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME, REMINDER, RECEIPT], T0)

        await storage.templates.sync([RECEIPT], moment(1000))

        assert await storage.templates.list() == [stored(RECEIPT, T0)]
        assert await storage.templates.get("welcome") is None

    async def test_new_ones_are_added_beside_the_kept_ones(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME], T0)

        await storage.templates.sync([WELCOME, RECEIPT], moment(1000))

        assert await storage.templates.list() == [
            stored(RECEIPT, moment(1000)),
            stored(WELCOME, T0),
        ]

    async def test_syncing_an_empty_catalog_removes_every_template(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME, REMINDER], T0)

        await storage.templates.sync([], moment(1000))

        assert await storage.templates.list() == []

    async def test_sync_is_idempotent(self, storage: Storage) -> None:
        sources = [WELCOME, REMINDER, RECEIPT]
        await storage.templates.sync(sources, T0)
        before = await storage.templates.list()

        await storage.templates.sync(sources, moment(60_000))
        await storage.templates.sync(list(reversed(sources)), moment(120_000))

        assert await storage.templates.list() == before
        for source in sources:
            assert await updated_at(storage, source.template_id) == T0

    async def test_concurrent_syncs_of_one_catalog_agree(self, storage: Storage) -> None:
        # Two processes starting at once both sync the catalog.
        await storage.templates.sync([WELCOME], T0)
        sources = [WELCOME, REMINDER, RECEIPT]

        await asyncio.gather(*(storage.templates.sync(sources, moment(1000)) for _ in range(5)))

        assert await storage.templates.list() == [
            stored(REMINDER, moment(1000)),
            stored(RECEIPT, moment(1000)),
            stored(WELCOME, T0),
        ]

    async def test_each_change_of_a_template_is_a_version_kept_readable(
        self, storage: Storage
    ) -> None:
        await storage.templates.sync([WELCOME], T0)
        edited = dataclasses.replace(WELCOME, body="<p>Hi {{first_name}}.</p>")
        await storage.templates.sync([edited], moment(1000))
        await storage.templates.sync([edited], moment(2000))  # no change: no version

        assert await storage.templates.version("welcome", 1) == stored(WELCOME, T0)
        assert await storage.templates.version("welcome", 2) == stored(
            edited, T0, version=2, at=moment(1000)
        )
        assert await storage.templates.version("welcome", 3) is None
        assert await storage.templates.version("class-reminder", 1) is None

    async def test_concurrent_syncs_of_a_change_make_one_version(self, storage: Storage) -> None:
        await storage.templates.sync([WELCOME], T0)
        edited = dataclasses.replace(WELCOME, subject="Hello {{first_name}}")

        await asyncio.gather(*(storage.templates.sync([edited], moment(1000)) for _ in range(5)))

        assert await storage.templates.get("welcome") == stored(
            edited, T0, version=2, at=moment(1000)
        )
        assert await storage.templates.version("welcome", 3) is None

    async def test_a_template_that_leaves_the_catalog_takes_its_versions(
        self, storage: Storage
    ) -> None:
        await storage.templates.sync([WELCOME, REMINDER], T0)
        await storage.templates.sync([REMINDER], moment(1000))

        await storage.templates.sync([WELCOME, REMINDER], moment(2000))

        assert await storage.templates.version("welcome", 1) == stored(WELCOME, moment(2000))
        assert await storage.templates.version("welcome", 2) is None
