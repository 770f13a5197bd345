from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from leadmail.domain.templates import Template, TemplateSource
from leadmail.ports.templates import TemplateRepository


class MemoryTemplateRepository(TemplateRepository):
    def __init__(self) -> None:
        self._templates: dict[str, Template] = {}
        # Not part of Template; kept so a sync that changes nothing is seen to change nothing.
        self.updated_at: dict[str, datetime] = {}

    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        wanted = {source.template_id: source for source in sources}
        templates = dict(self._templates)
        updated_at = dict(self.updated_at)
        for template_id in set(templates) - set(wanted):
            del templates[template_id]
            del updated_at[template_id]
        for template_id, source in wanted.items():
            stored = templates.get(template_id)
            if stored is not None and _content(stored) == _content(source):
                continue
            templates[template_id] = Template(
                template_id=template_id,
                name=source.name,
                subject=source.subject,
                body=source.body,
                created_at=now if stored is None else stored.created_at,
            )
            updated_at[template_id] = now
        self._templates, self.updated_at = templates, updated_at

    async def list(self) -> list[Template]:
        return [self._templates[template_id] for template_id in sorted(self._templates)]

    async def get(self, template_id: str) -> Template | None:
        return self._templates.get(template_id)


def _content(template: Template | TemplateSource) -> tuple[str, str, str]:
    return (template.name, template.subject, template.body)
