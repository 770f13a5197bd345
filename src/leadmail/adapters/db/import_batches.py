"""One batch of an import written with its progress, all or nothing.

Postgres: ONE statement (one round trip) for the whole batch: the import row locked and
checked (still this runner's, at this position), the leads upserted from arrays
(``INSERT ... SELECT FROM unnest(...) ON CONFLICT (account_id, email_key)``; ``xmax = 0``
tells an inserted row from an updated one), the error rows, and the counts. The rules a
merge must keep (tags, fields) are a WHERE on the update: a row that would break them is
not written, and is recorded as failed with its reason.

SQLite: the same effects in its write transaction (sqlite_batches.py).
"""

from __future__ import annotations

import functools
from typing import Any

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.leads import LEADS
from leadmail.domain.custom_fields import MAX_FIELDS, MAX_FIELDS_BYTES, encode_fields
from leadmail.domain.lead_imports import (
    EXISTS,
    FIELDS_TOO_LARGE,
    TEXT_COLUMNS,
    TOO_MANY_FIELDS,
    TOO_MANY_TAGS,
    BatchOutcome,
    ImportBatch,
    ImportMode,
    ImportStatus,
)
from leadmail.domain.lead_timeline import LeadEventKind
from leadmail.domain.tags import MAX_TAGS

_TAGS = 'ARRAY(SELECT DISTINCT t COLLATE "C" FROM unnest({} || {}) AS t ORDER BY 1)'
_MERGED_TAGS = _TAGS.format('"leads"."tags"', 'EXCLUDED."tags"')
_MERGED_FIELDS = '("leads"."fields" || EXCLUDED."fields")'


def _keys(fields: str) -> str:
    return f"(SELECT count(*) FROM jsonb_object_keys({fields}))"


def _fits(tags: str, fields: str) -> tuple[str, str, str]:
    """The three limits of a merged lead: tags, keys, bytes of compact JSON (jsonb's text
    has a space after each ``:`` and ``,``: 2 per key, less one)."""
    return (
        f"cardinality({tags}) <= {MAX_TAGS}",
        f"{_keys(fields)} <= {MAX_FIELDS}",
        f"octet_length({fields}::text) - 2 * {_keys(fields)} + 1 <= {MAX_FIELDS_BYTES}",
    )


@functools.cache
def _statement(mode: ImportMode, columns: frozenset[str]) -> Any:
    given = [c for c in TEXT_COLUMNS if c in columns]
    sets = ", ".join(
        [
            '"email" = EXCLUDED."email"',
            *(f'"{c}" = EXCLUDED."{c}"' for c in given),
            f'"tags" = {_MERGED_TAGS}',
            f'"fields" = {_MERGED_FIELDS}',
            '"updated_at" = EXCLUDED."updated_at"',
        ]
    )
    if mode is ImportMode.CREATE:
        on_conflict = "DO NOTHING"
        refused = (
            'SELECT $1::text, v."row_number", \'email\', $23::text, v."email" FROM v'
            ' WHERE NOT EXISTS (SELECT 1 FROM up WHERE up."email_key" = v."email_key")'
        )
    else:
        on_conflict = f"DO UPDATE SET {sets} WHERE " + " AND ".join(
            _fits(_MERGED_TAGS, _MERGED_FIELDS)
        )
        tags = _TAGS.format('l."tags"', "string_to_array(v.\"tags\", ',')")
        fields = '(l."fields" || v."fields"::jsonb)'
        few_tags, few_keys, _ = _fits(tags, fields)
        refused = (
            'SELECT $1::text, v."row_number",'
            f" CASE WHEN {few_tags} THEN 'fields' ELSE 'tags' END,"
            f" CASE WHEN NOT {few_tags} THEN $23::text WHEN NOT {few_keys} THEN $24::text"
            ' ELSE $25::text END, v."email"'
            ' FROM v JOIN "leads" AS l ON l."account_id" = $14 AND l."email_key" = v."email_key"'
            ' WHERE NOT EXISTS (SELECT 1 FROM up WHERE up."email_key" = v."email_key")'
        )
    not_written = "((SELECT count(*) FROM v) - (SELECT count(*) FROM up))"
    skipped = f"$21::int + {not_written}" if mode is ImportMode.CREATE else "$21::int"
    failed = "$22::int" if mode is ImportMode.CREATE else f"$22::int + {not_written}"
    text = f"""
WITH claim AS (
  SELECT "import_id" FROM "lead_imports" WHERE "import_id" = $1 AND "runner" = $2
    AND "rows_done" = $3 AND "status" = '{ImportStatus.RUNNING}' FOR UPDATE
), v AS (
  SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
    $10::text[], $11::text[], $12::text[], $13::int[])
    AS v("lead_id", "email", "email_key", "name", "source", "note", "phone", "tags", "fields",
      "row_number")
  WHERE EXISTS (SELECT 1 FROM claim)
), up AS (
  INSERT INTO "leads" ("lead_id", "account_id", "name", "email", "email_key", "source", "note",
    "created_at", "updated_at", "phone", "tags", "fields")
  SELECT "lead_id", $14::text, "name", "email", "email_key", "source", "note",
    $15::timestamptz, $15::timestamptz, "phone",
    string_to_array("tags", ','), "fields"::jsonb FROM v
  ON CONFLICT ("account_id", "email_key") {on_conflict}
  RETURNING "leads"."lead_id", "leads"."email_key", ("leads"."xmax" = 0) AS "created"
), events AS (
  INSERT INTO "lead_events" ("account_id", "lead_id", "kind", "at", "detail")
  SELECT $14::text, "lead_id", '{LeadEventKind.IMPORTED}', $15::timestamptz,
    jsonb_build_object('import_id', $1::text, 'created', "created") FROM up
), errs AS (
  INSERT INTO "lead_import_errors" ("import_id", "row_number", "field", "message", "email")
  SELECT $1::text, r, f, m, e FROM unnest($16::int[], $17::text[], $18::text[], $19::text[])
    AS x(r, f, m, e)
    WHERE EXISTS (SELECT 1 FROM claim)
  UNION ALL {refused}
), progress AS (
  UPDATE "lead_imports" SET "rows_done" = $20::int, "attempts" = 0,
    "created" = "created" + (SELECT count(*) FROM up WHERE "created"),
    "updated" = "updated" + (SELECT count(*) FROM up WHERE NOT "created"),
    "skipped" = "skipped" + {skipped}, "failed" = "failed" + {failed},
    "updated_at" = $15::timestamptz
  WHERE "import_id" = $1 AND EXISTS (SELECT 1 FROM claim)
  RETURNING 1
)
SELECT (SELECT count(*) FROM progress) AS "claimed",
  (SELECT count(*) FROM up WHERE "created") AS "created",
  (SELECT count(*) FROM up WHERE NOT "created") AS "updated",
  (SELECT count(*) FROM v) AS "given"
"""
    return LEADS.statement(text)


async def write_postgres(db: Database, batch: ImportBatch) -> BatchOutcome | None:
    leads = [row.lead for row in batch.leads]
    errors = [*batch.failed, *batch.skipped]
    messages = (
        [EXISTS]
        if batch.mode is ImportMode.CREATE
        else [TOO_MANY_TAGS, TOO_MANY_FIELDS, FIELDS_TOO_LARGE]
    )
    row = await db.fetchrow(
        _statement(batch.mode, batch.columns),
        batch.import_id,
        batch.runner,
        batch.start,
        [lead.lead_id for lead in leads],
        [lead.email for lead in leads],
        [lead.email_key for lead in leads],
        [lead.name for lead in leads],
        [lead.source for lead in leads],
        [lead.note for lead in leads],
        [lead.phone for lead in leads],
        [",".join(lead.tags) for lead in leads],  # a tag holds no comma
        [encode_fields(lead.fields) for lead in leads],
        [imported.row for imported in batch.leads],
        batch.account_id,
        batch.now,
        [e.row for e in errors],
        [e.field for e in errors],
        [e.message for e in errors],
        [e.email for e in errors],
        batch.end,
        len(batch.skipped),
        len(batch.failed),
        *messages,
    )
    assert row is not None
    if not row["claimed"]:
        return None
    not_written = row["given"] - row["created"] - row["updated"]
    create = batch.mode is ImportMode.CREATE
    return BatchOutcome(
        created=row["created"],
        updated=row["updated"],
        skipped=len(batch.skipped) + (not_written if create else 0),
        failed=len(batch.failed) + (0 if create else not_written),
    )
