"""Accounts' own templates in memory: every version kept, the newest one current."""

from __future__ import annotations

from leadmail.domain.template_drafts import TemplateExists, too_many_templates
from leadmail.domain.templates import Template
from leadmail.ports.templates import AccountTemplateRepository


class MemoryAccountTemplateRepository(AccountTemplateRepository):
    def __init__(self) -> None:
        # (account id, template id) -> its versions, oldest first (the last is current).
        self._versions: dict[tuple[str, str], list[Template]] = {}

    async def create(self, template: Template, limit: int) -> None:
        account_id = _owner(template)
        key = (account_id, template.template_id)
        if key in self._versions:
            raise TemplateExists(template.template_id, predefined=False)
        if sum(1 for owner, _ in self._versions if owner == account_id) >= limit:
            raise too_many_templates()
        self._versions[key] = [template]

    async def replace(self, template: Template) -> bool:
        versions = self._versions.get((_owner(template), template.template_id))
        if versions is None or versions[-1].version != template.version - 1:
            return False
        versions.append(template)
        return True

    async def delete(self, account_id: str, template_id: str) -> bool:
        return self._versions.pop((account_id, template_id), None) is not None

    async def get(self, account_id: str, template_id: str) -> Template | None:
        versions = self._versions.get((account_id, template_id))
        return None if versions is None else versions[-1]

    async def version(self, account_id: str, template_id: str, version: int) -> Template | None:
        versions = self._versions.get((account_id, template_id), [])
        return next((v for v in versions if v.version == version), None)

    async def versions(
        self, account_id: str, template_id: str, limit: int, before: int | None = None
    ) -> list[Template]:
        versions = self._versions.get((account_id, template_id), [])
        older = [v for v in reversed(versions) if before is None or v.version < before]
        return older[:limit]

    async def layout_users(self, account_id: str, layout_id: str) -> list[str]:
        return [
            template_id
            for (owner, template_id), versions in sorted(self._versions.items())
            if owner == account_id and versions[-1].layout_id == layout_id
        ]

    async def list(self, account_id: str) -> list[Template]:
        return [
            versions[-1]
            for (owner, _), versions in sorted(self._versions.items())
            if owner == account_id
        ]


def _owner(template: Template) -> str:
    if template.account_id is None:
        raise ValueError("a predefined template is the catalog's, not an account's")
    return template.account_id
