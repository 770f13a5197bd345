"""The AccountTemplateRepository contract (ports/templates.py), run against every adapter:
each account's own templates, every version of them, and nothing of one account seen or
changed through another."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.template_drafts import (
    TemplateDraft,
    TemplateExists,
    first_version,
    next_version,
)
from leadmail.domain.templates import Template, TemplateKind
from tests.contract.support import T0, Storage, moment

WELCOME = TemplateDraft(
    name="Welcome",
    subject="Welcome, {{first_name}}",
    html="<p>Hello {{first_name}}, welcome to {{course}}.</p>",
    text="Hello {{first_name}}, welcome to {{course}}.",
)
LAYOUT = TemplateDraft(
    name="School letterhead",
    subject="(layout)",
    html="<header>Acme</header>{{content}}<footer>{{unsubscribe_url}}</footer>",
    kind=TemplateKind.LAYOUT,
)


def welcome(account_id: str, template_id: str = "welcome") -> Template:
    return first_version(account_id, template_id, WELCOME, T0)


class TestAccountTemplateRepositoryContract:
    async def test_a_created_template_is_read_back_exactly(self, storage: Storage) -> None:
        account = await storage.new_account()
        zoe = TemplateDraft(
            name="Zoë's «special» offer — 100% off",
            subject="Hi {{name}} ✓ ' \" \\ %_",
            html="<p>Line one\r\nLine two\ttab &amp; <b>bold</b></p>\n" + "x" * 100_000,
            text=None,
            layout_id="letterhead",
            inline_css=False,
        )
        template = first_version(account, "zoe", zoe, T0)

        await storage.account_templates.create(template, limit=500)

        assert await storage.account_templates.get(account, "zoe") == template
        assert await storage.account_templates.version(account, "zoe", 1) == template
        assert template.version == 1
        assert template.changed_at == T0

    async def test_list_is_the_accounts_own_in_id_order(self, storage: Storage) -> None:
        account, other = await storage.new_account(), await storage.new_account()
        for template_id in ("b-2", "a_1", "c"):
            await storage.account_templates.create(welcome(account, template_id), limit=500)
        await storage.account_templates.create(welcome(other, "a0"), limit=500)

        listed = await storage.account_templates.list(account)

        assert [t.template_id for t in listed] == ["a_1", "b-2", "c"]
        assert [t.template_id for t in await storage.account_templates.list(other)] == ["a0"]

    async def test_an_id_taken_in_the_account_is_refused_and_free_in_another(
        self, storage: Storage
    ) -> None:
        account, other = await storage.new_account(), await storage.new_account()
        await storage.account_templates.create(welcome(account), limit=500)
        clash = dataclasses.replace(welcome(account), name="Another")

        with pytest.raises(TemplateExists):
            await storage.account_templates.create(clash, limit=500)
        await storage.account_templates.create(welcome(other), limit=500)

        assert await storage.account_templates.get(account, "welcome") == welcome(account)
        assert await storage.account_templates.version(account, "welcome", 2) is None

    async def test_the_limit_refuses_one_template_more_and_stores_nothing(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        for n in range(3):
            await storage.account_templates.create(welcome(account, f"t{n}"), limit=3)

        with pytest.raises(ValidationFailed) as refused:
            await storage.account_templates.create(welcome(account, "t3"), limit=3)

        assert refused.value.errors[0].field == "id"
        assert "at most 500" in refused.value.errors[0].message
        assert await storage.account_templates.get(account, "t3") is None
        assert len(await storage.account_templates.list(account)) == 3

    async def test_concurrent_creations_never_pass_the_limit(self, storage: Storage) -> None:
        account = await storage.new_account()
        results = await asyncio.gather(
            *(
                storage.account_templates.create(welcome(account, f"t{n}"), limit=4)
                for n in range(8)
            ),
            return_exceptions=True,
        )

        assert sum(r is None for r in results) == 4
        assert all(r is None or isinstance(r, ValidationFailed) for r in results)
        assert len(await storage.account_templates.list(account)) == 4

    async def test_a_replacement_is_the_next_version_and_the_last_stays_readable(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        first = welcome(account)
        await storage.account_templates.create(first, limit=500)
        draft = dataclasses.replace(WELCOME, subject="Hi {{first_name}}", text=None)
        second = next_version(first, draft, moment(1000))

        assert await storage.account_templates.replace(second)

        assert await storage.account_templates.get(account, "welcome") == second
        assert second.version == 2
        assert second.created_at == T0
        assert second.changed_at == moment(1000)
        assert await storage.account_templates.version(account, "welcome", 1) == first
        assert await storage.account_templates.version(account, "welcome", 2) == second

    async def test_a_replacement_of_a_stale_version_is_refused(self, storage: Storage) -> None:
        account = await storage.new_account()
        first = welcome(account)
        await storage.account_templates.create(first, limit=500)
        second = next_version(first, dataclasses.replace(WELCOME, name="Two"), moment(1000))
        assert await storage.account_templates.replace(second)
        also_second = next_version(first, dataclasses.replace(WELCOME, name="Also"), moment(2000))

        assert not await storage.account_templates.replace(also_second)

        assert await storage.account_templates.get(account, "welcome") == second
        assert await storage.account_templates.version(account, "welcome", 3) is None

    async def test_concurrent_replacements_of_one_version_store_one(self, storage: Storage) -> None:
        account = await storage.new_account()
        first = welcome(account)
        await storage.account_templates.create(first, limit=500)
        rivals = [
            next_version(first, dataclasses.replace(WELCOME, name=f"Edit {n}"), moment(n))
            for n in range(5)
        ]

        results = await asyncio.gather(*(storage.account_templates.replace(r) for r in rivals))

        assert sum(results) == 1
        winner = rivals[results.index(True)]
        assert await storage.account_templates.get(account, "welcome") == winner
        assert await storage.account_templates.version(account, "welcome", 2) == winner

    async def test_versions_are_pages_newest_first(self, storage: Storage) -> None:
        account = await storage.new_account()
        current = welcome(account)
        await storage.account_templates.create(current, limit=500)
        made = [current]
        for n in range(2, 6):
            current = next_version(
                current, dataclasses.replace(WELCOME, name=f"V{n}"), moment(n * 1000)
            )
            assert await storage.account_templates.replace(current)
            made.append(current)

        first_page = await storage.account_templates.versions(account, "welcome", 2)
        second_page = await storage.account_templates.versions(account, "welcome", 2, before=4)
        last_page = await storage.account_templates.versions(account, "welcome", 2, before=2)

        assert first_page == [made[4], made[3]]
        assert second_page == [made[2], made[1]]
        assert last_page == [made[0]]
        assert await storage.account_templates.versions(account, "nothing", 2) == []

    async def test_delete_takes_the_template_and_its_versions(self, storage: Storage) -> None:
        account = await storage.new_account()
        first = welcome(account)
        await storage.account_templates.create(first, limit=500)
        await storage.account_templates.replace(next_version(first, WELCOME, moment(1000)))

        assert await storage.account_templates.delete(account, "welcome")
        assert not await storage.account_templates.delete(account, "welcome")

        assert await storage.account_templates.get(account, "welcome") is None
        assert await storage.account_templates.version(account, "welcome", 1) is None
        assert await storage.account_templates.versions(account, "welcome", 10) == []
        # The id is free again, from version 1.
        await storage.account_templates.create(welcome(account), limit=500)
        assert await storage.account_templates.version(account, "welcome", 1) == first

    async def test_another_account_sees_and_changes_nothing(self, storage: Storage) -> None:
        account, other = await storage.new_account(), await storage.new_account()
        first = welcome(account)
        await storage.account_templates.create(first, limit=500)
        foreign = dataclasses.replace(
            next_version(first, dataclasses.replace(WELCOME, name="Taken"), moment(1000)),
            account_id=other,
        )

        assert await storage.account_templates.get(other, "welcome") is None
        assert await storage.account_templates.version(other, "welcome", 1) is None
        assert await storage.account_templates.versions(other, "welcome", 10) == []
        assert await storage.account_templates.list(other) == []
        assert not await storage.account_templates.replace(foreign)
        assert not await storage.account_templates.delete(other, "welcome")
        assert await storage.account_templates.get(account, "welcome") == first

    async def test_layout_users_are_the_templates_naming_it_now(self, storage: Storage) -> None:
        account, other = await storage.new_account(), await storage.new_account()
        await storage.account_templates.create(
            first_version(account, "letterhead", LAYOUT, T0), limit=500
        )
        wrapped = dataclasses.replace(WELCOME, layout_id="letterhead")
        for template_id in ("b", "a"):
            await storage.account_templates.create(
                first_version(account, template_id, wrapped, T0), limit=500
            )
        await storage.account_templates.create(welcome(account, "plain"), limit=500)
        moved = first_version(account, "moved", wrapped, T0)
        await storage.account_templates.create(moved, limit=500)
        await storage.account_templates.replace(next_version(moved, WELCOME, moment(1000)))
        await storage.account_templates.create(first_version(other, "x", wrapped, T0), limit=500)

        assert await storage.account_templates.layout_users(account, "letterhead") == ["a", "b"]
        assert await storage.account_templates.layout_users(account, "plain") == []
