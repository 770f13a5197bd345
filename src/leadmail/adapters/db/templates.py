"""Templates on Piccolo: the predefined ones (synced from the file catalog) and each
account's own, with every version of both in template_versions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from leadmail.adapters.db.column_values import moment_of
from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import is_unique_violation, refused, translate_errors
from leadmail.adapters.db.statements import Mapped, Row
from leadmail.adapters.db.tables import AccountTemplates, TemplateVersions
from leadmail.domain.template_drafts import TemplateExists, too_many_templates
from leadmail.domain.templates import Template, TemplateKind, TemplateSource
from leadmail.ports.templates import AccountTemplateRepository, TemplateRepository

_REFUSED = "The database refused to store the templates"
ACCOUNT_TEMPLATES = Mapped(AccountTemplates, Template)
VERSIONS = Mapped(TemplateVersions, Template)

# One catalog template stored: new (version 1), or its next version when its content
# changed (else untouched, and not returned). Two processes syncing at start-up at once do
# not collide: the second finds the row changed already and returns nothing.
_UPSERT = VERSIONS.statement(  # the statement's text alone: no row maps to a Template whole
    'INSERT INTO "templates" ("template_id", "name", "subject", "body", "created_at",'
    ' "updated_at", "version") VALUES (%s, %s, %s, %s, %s, %s, 1)'
    ' ON CONFLICT ("template_id") DO UPDATE SET "name" = EXCLUDED."name",'
    ' "subject" = EXCLUDED."subject", "body" = EXCLUDED."body",'
    ' "updated_at" = EXCLUDED."updated_at", "version" = "templates"."version" + 1'
    ' WHERE "templates"."name" <> EXCLUDED."name"'
    ' OR "templates"."subject" <> EXCLUDED."subject"'
    ' OR "templates"."body" <> EXCLUDED."body"'
    ' RETURNING "template_id", "name", "subject", "body", "created_at", "updated_at",'
    ' "version"'
)
# A version's row; a sync that lost the race to another finds it there.
_ADD_VERSION = VERSIONS.statement(
    'INSERT INTO "template_versions" ("account_id", "template_id", "kind", "version", "name",'
    ' "subject", "body", "text", "layout_id", "inline_css", "created_at", "updated_at")'
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)


def _predefined(row: Row) -> Template:
    return Template(
        template_id=row["template_id"],
        name=row["name"],
        subject=row["subject"],
        body=row["body"],
        created_at=moment_of(row["created_at"]),
        version=row["version"],
        updated_at=moment_of(row["updated_at"]),
    )


def _version_args(template: Template) -> tuple[Any, ...]:
    return (
        template.account_id,
        template.template_id,
        template.kind.value,
        template.version,
        template.name,
        template.subject,
        template.body,
        template.text,
        template.layout_id,
        template.inline_css,
        template.created_at,
        template.changed_at,
    )


class PiccoloTemplateRepository(TemplateRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.templates
        self._v = database.tables.template_versions

    async def sync(self, sources: Sequence[TemplateSource], now: datetime) -> None:
        t, v = self._t, self._v
        wanted = {source.template_id: source for source in sources}  # the last of a repeat
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                gone = [
                    row["template_id"]
                    for row in await t.select(t.template_id)
                    if row["template_id"] not in wanted
                ]
                if gone:  # a template that leaves the catalog takes its versions with it
                    await v.delete().where(v.account_id.is_null() & v.template_id.is_in(gone))
                    await t.delete().where(t.template_id.is_in(gone))
                # Sorted: two processes lock rows in the same order.
                for template_id, source in sorted(wanted.items()):
                    changed = await self._db.fetch(
                        _UPSERT, template_id, source.name, source.subject, source.body, now, now
                    )
                    for row in changed:
                        await self._db.execute(_ADD_VERSION, *_version_args(_predefined(row)))

    async def list(self) -> list[Template]:
        t = self._t
        with refused(_REFUSED), translate_errors():
            rows = await t.select().order_by(t.template_id)
        return [_predefined(row) for row in rows]

    async def get(self, template_id: str) -> Template | None:
        t = self._t
        with refused(_REFUSED), translate_errors():
            row = await t.select().where(t.template_id == template_id).first()
        return None if row is None else _predefined(row)

    async def version(self, template_id: str, version: int) -> Template | None:
        v = self._v
        with refused(_REFUSED), translate_errors():
            row = await (
                v.select()
                .where(
                    v.account_id.is_null() & (v.template_id == template_id) & (v.version == version)
                )
                .first()
            )
        return None if row is None else VERSIONS.from_row(row)


class PiccoloAccountTemplateRepository(AccountTemplateRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._t = database.tables.account_templates
        self._v = database.tables.template_versions

    async def create(self, template: Template, limit: int) -> None:
        t, v = self._t, self._v
        account_id = template.account_id
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                if self._db.kind == "postgres":  # creations in one account, one at a time
                    await t.raw(
                        "SELECT pg_advisory_xact_lock(hashtext({}))", f"templates:{account_id}"
                    )
                held = await t.count().where(t.account_id == account_id)
                if held >= limit:
                    raise too_many_templates()
                try:
                    await t.insert(t(**ACCOUNT_TEMPLATES.to_dict(template)))
                except Exception as e:
                    if is_unique_violation(e):
                        raise TemplateExists(template.template_id, predefined=False) from e
                    raise
                await v.insert(v(**VERSIONS.to_dict(template)))

    async def replace(self, template: Template) -> bool:
        t, v = self._t, self._v
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                replaced = await (
                    t.update(
                        {
                            t.name: template.name,
                            t.subject: template.subject,
                            t.body: template.body,
                            t.text: template.text,
                            t.layout_id: template.layout_id,
                            t.inline_css: template.inline_css,
                            t.version: template.version,
                            t.updated_at: template.changed_at,
                        }
                    )
                    .where(
                        (t.account_id == template.account_id)
                        & (t.template_id == template.template_id)
                        & (t.version == template.version - 1)
                    )
                    .returning(t.account_template_id)
                )
                if not replaced:
                    return False
                await v.insert(v(**VERSIONS.to_dict(template)))
        return True

    async def delete(self, account_id: str, template_id: str) -> bool:
        t, v = self._t, self._v
        with refused(_REFUSED), translate_errors():
            async with self._db.transaction():
                removed = await (
                    t.delete()
                    .where((t.account_id == account_id) & (t.template_id == template_id))
                    .returning(t.account_template_id)
                )
                await v.delete().where(
                    (v.account_id == account_id) & (v.template_id == template_id)
                )
        return bool(removed)

    async def get(self, account_id: str, template_id: str) -> Template | None:
        t = self._t
        with refused(_REFUSED), translate_errors():
            row = await (
                t.select().where((t.account_id == account_id) & (t.template_id == template_id))
            ).first()
        return None if row is None else ACCOUNT_TEMPLATES.from_row(row)

    async def version(self, account_id: str, template_id: str, version: int) -> Template | None:
        v = self._v
        with refused(_REFUSED), translate_errors():
            row = await (
                v.select()
                .where(
                    (v.account_id == account_id)
                    & (v.template_id == template_id)
                    & (v.version == version)
                )
                .first()
            )
        return None if row is None else VERSIONS.from_row(row)

    async def versions(
        self, account_id: str, template_id: str, limit: int, before: int | None = None
    ) -> list[Template]:
        v = self._v
        where = (v.account_id == account_id) & (v.template_id == template_id)
        if before is not None:
            where &= v.version < before
        with refused(_REFUSED), translate_errors():
            rows = await v.select().where(where).order_by(v.version, ascending=False).limit(limit)
        return [VERSIONS.from_row(row) for row in rows]

    async def layout_users(self, account_id: str, layout_id: str) -> list[str]:
        t = self._t
        with refused(_REFUSED), translate_errors():
            rows = await t.select(t.template_id).where(
                (t.account_id == account_id)
                & (t.layout_id == layout_id)
                & (t.kind == TemplateKind.TEMPLATE.value)
            )
        return sorted(row["template_id"] for row in rows)

    async def list(self, account_id: str) -> list[Template]:
        t = self._t
        with refused(_REFUSED), translate_errors():
            rows = await t.select().where(t.account_id == account_id)
        # Ordered here, not by the database's collation, which may ignore '-' and '_'.
        return sorted((ACCOUNT_TEMPLATES.from_row(r) for r in rows), key=lambda x: x.template_id)
