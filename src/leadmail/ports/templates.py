from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.templates import Template, TemplateSource


class TemplateCatalog(Protocol):
    """Where the predefined templates are written: files a person can read and edit."""

    def load(self) -> list[TemplateSource]:
        """Every template of the catalog. Raises InvalidTemplate naming the bad file."""
        ...


class TemplateRepository(Protocol):
    """The stored templates every account can use. Raises StorageUnavailable."""

    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        """Make the stored set equal the catalog: add new ones (created_at = now), update
        changed ones (created_at kept), remove those no longer in it. Idempotent."""
        ...

    async def list(self) -> list[Template]:
        """Ordered by template id."""
        ...

    async def get(self, template_id: str) -> Template | None: ...

    async def version(self, template_id: str, version: int) -> Template | None:
        """One version of a predefined template: a sync that changes a template stores
        its next version (the first sync, version 1), and a template that leaves the
        catalog takes its versions with it."""
        ...


class AccountTemplateRepository(Protocol):
    """Each account's own templates and layouts, and every version of each, invisible to
    every other account. Raises StorageUnavailable."""

    async def create(self, template: Template, limit: int) -> None:
        """Store a first version. Raises TemplateExists when the account has that id, and
        the ValidationFailed of too_many_templates() when it holds ``limit`` already."""
        ...

    async def replace(self, template: Template) -> bool:
        """Store ``template`` as the next version of the stored one: stored only if the
        stored version is ``template.version - 1`` (False when another change came
        first, or the template is gone); the version before stays readable."""
        ...

    async def delete(self, account_id: str, template_id: str) -> bool:
        """The template and its versions; False when there was none."""
        ...

    async def get(self, account_id: str, template_id: str) -> Template | None:
        """The current version."""
        ...

    async def version(self, account_id: str, template_id: str, version: int) -> Template | None: ...

    async def versions(
        self, account_id: str, template_id: str, limit: int, before: int | None = None
    ) -> list[Template]:
        """Up to ``limit`` versions, newest first, older than ``before`` when given."""
        ...

    async def layout_users(self, account_id: str, layout_id: str) -> list[str]:
        """The ids of the account's templates whose current version names the layout."""
        ...

    async def list(self, account_id: str) -> list[Template]:
        """The current version of each, ordered by template id."""
        ...
