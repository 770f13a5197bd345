from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from leadmail.domain.templates import Template, TemplateSource
from leadmail.ports.templates import TemplateRepository


class MemoryTemplateRepository(TemplateRepository):
    def __init__(self) -> None:
        # template id -> its versions, oldest first (the last is current)
        self._versions: dict[str, list[Template]] = {}

    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        wanted = {source.template_id: source for source in sources}
        kept = {
            template_id: list(versions)
            for template_id, versions in self._versions.items()
            if template_id in wanted
        }
        for template_id, source in wanted.items():
            versions = kept.setdefault(template_id, [])
            current = versions[-1] if versions else None
            if current is not None and _content(current) == _content(source):
                continue
            versions.append(
                Template(
                    template_id=template_id,
                    name=source.name,
                    subject=source.subject,
                    body=source.body,
                    created_at=now if current is None else current.created_at,
                    version=1 if current is None else current.version + 1,
                    updated_at=now,
                )
            )
        self._versions = kept

    async def list(self) -> list[Template]:
        return [self._versions[template_id][-1] for template_id in sorted(self._versions)]

    async def get(self, template_id: str) -> Template | None:
        versions = self._versions.get(template_id)
        return None if versions is None else versions[-1]

    async def version(self, template_id: str, version: int) -> Template | None:
        versions = self._versions.get(template_id, [])
        return next((v for v in versions if v.version == version), None)


def _content(template: Template | TemplateSource) -> tuple[str, str, str]:
    return (template.name, template.subject, template.body)
