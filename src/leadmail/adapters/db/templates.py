from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from piccolo.columns.combination import WhereRaw

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused, translate_errors
from leadmail.adapters.db.statements import Mapped
from leadmail.adapters.db.tables import Templates
from leadmail.domain.templates import Template, TemplateSource
from leadmail.ports.templates import TemplateRepository

# The stored row differs from the catalog's: only then is it updated (and updated_at moved).
_CHANGED = WhereRaw(
    '"templates"."name" <> EXCLUDED."name"'
    ' OR "templates"."subject" <> EXCLUDED."subject"'
    ' OR "templates"."body" <> EXCLUDED."body"'
)


_REFUSED = "The database refused to store the templates"
TEMPLATES = Mapped(Templates, Template)


class PiccoloTemplateRepository(TemplateRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.templates

    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        t = self._t
        wanted = {source.template_id: source for source in sources}  # the last of a repeat
        # One upsert, not read-compare-write: two processes syncing at start-up at once do
        # not collide on the primary key. Sorted, so they lock rows in the same order.
        rows = [
            t(
                template_id=source.template_id,
                name=source.name,
                subject=source.subject,
                body=source.body,
                created_at=now,
                updated_at=now,
            )
            for _, source in sorted(wanted.items())
        ]
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                if not rows:
                    await t.delete(force=True)
                    return
                await t.insert(*rows).on_conflict(
                    target=t.template_id,
                    action="DO UPDATE",
                    values=[t.name, t.subject, t.body, t.updated_at],
                    where=_CHANGED,
                )
                await t.delete().where(t.template_id.not_in(list(wanted)))

    async def list(self) -> list[Template]:
        t = self._t
        with refused(_REFUSED), translate_errors():
            rows = await t.select().order_by(t.template_id)
        return [TEMPLATES.from_row(row) for row in rows]

    async def get(self, template_id: str) -> Template | None:
        t = self._t
        with refused(_REFUSED), translate_errors():
            row = await t.select().where(t.template_id == template_id).first()
        return None if row is None else TEMPLATES.from_row(row)
