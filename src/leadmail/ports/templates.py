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
