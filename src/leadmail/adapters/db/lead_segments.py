"""A segment (domain/segments.py) as SQL: the WHERE clause of a listing or a count, for
Postgres (array and jsonb operators, which the GIN index on tags serves) and for SQLite
(JSON functions over the same values stored as text).

Every value is a parameter; only column names and fixed operators are written into the
text. The text depends on which filters are given (and how many tags), not on their
values, so a few shapes cover every request.
"""

from __future__ import annotations

from typing import Any, Literal

from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.segments import LeadFilter
from leadmail.domain.text_match import fold, search_form

Kind = Literal["sqlite", "postgres"]
# The attributes a segment compares exactly, and their columns (the same names).
_EQUALS = frozenset({"email_key", "source", "phone"})


def where(kind: Kind, account_id: str, segment: LeadFilter) -> tuple[str, list[Any]]:
    """`` WHERE ...`` (``%s`` for each parameter) and its arguments."""
    conditions, args = _conditions(kind, segment)
    return " WHERE " + " AND ".join(['"account_id" = %s', *conditions]), [account_id, *args]


def _conditions(kind: Kind, segment: LeadFilter) -> tuple[list[str], list[Any]]:
    """The segment's conditions on a lead, the account aside."""
    sql: list[str] = []
    args: list[Any] = []
    for attribute, value in segment.equals:
        if attribute not in _EQUALS:
            raise ValueError(f"not a column a segment compares: {attribute}")
        sql.append(f'"{attribute}" = %s')
        args.append(value)
    if segment.created_after is not None:
        sql.append('"created_at" > %s')
        args.append(segment.created_after)
    if segment.created_before is not None:
        sql.append('"created_at" < %s')
        args.append(segment.created_before)
    if kind == "postgres":
        _postgres(segment, sql, args)
    else:
        _sqlite(segment, sql, args)
    return sql, args


# SQLite's functions for what it cannot say itself, the domain's own (Python) code:
# adapters/db/connect.py registers them on every connection.
SQLITE_FOLD = "leadmail_fold"  # segments.fold
SQLITE_SEARCH = "leadmail_search"  # segments.search_matches(name, email_key, search)


def _like_prefix(text: str) -> str:
    """``text`` as a LIKE pattern's literal (backslash escapes, Postgres's default)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# segments.search_text in SQL: the expression the trigram index leads_search is built on
# (its migration writes the same text).
SEARCH_TEXT = (
    "(' ' || \"email_key\" || ' ' || translate(lower(\"name\"), '-', ' ')"
    " || CASE WHEN strpos(\"email_key\", '-') > 0"
    " THEN ' ' || replace(\"email_key\", '-', '') ELSE '' END"
    " || CASE WHEN strpos(\"name\", '-') > 0"
    " THEN ' ' || replace(lower(\"name\"), '-', '') ELSE '' END)"
)


def _search_postgres(search: str, sql: list[str], args: list[Any]) -> None:
    """The search after a space of the search text: one LIKE the trigram index serves.
    A search holding a hyphen is looked for as the text holds a hyphenated word, joined
    (``smith-j`` as ``smithj``): two patterns, hyphen as a space and hyphen as itself,
    gave the index only the trigrams of ``smith`` and ``j``, and thousands of candidates
    to check (bench/README.md, scenario QS)."""
    sql.append(f"{SEARCH_TEXT} LIKE %s")
    args.append(f"% {_like_prefix(search_form(search))}%")


def _postgres(segment: LeadFilter, sql: list[str], args: list[Any]) -> None:
    if segment.all_tags:
        sql.append('"tags" @> %s::text[]')
        args.append(list(segment.all_tags))
    if segment.any_tags:
        sql.append('"tags" && %s::text[]')
        args.append(list(segment.any_tags))
    if segment.no_tags:
        sql.append('NOT ("tags" && %s::text[])')
        args.append(list(segment.no_tags))
    typed = {key: value for key, value in segment.fields if not isinstance(value, str)}
    if typed:
        # Containment of one key's scalar is equality by JSON type: 42 = 42.0, true <> 1.
        sql.append('"fields" @> %s::jsonb')
        args.append(encode_fields(typed))
    for key, value in segment.fields:
        if isinstance(value, str):  # text in any case (segments.field_matches)
            sql.append('jsonb_typeof("fields" -> %s) = \'string\' AND lower("fields" ->> %s) = %s')
            args.extend([key, key, fold(value)])
    if segment.search:
        _search_postgres(segment.search, sql, args)


_HAS_TAG = 'EXISTS (SELECT 1 FROM json_each("leads"."tags") WHERE "value" IN ({}))'
# JSON types by SQLite's json_type: a boolean is "true"/"false", never a number.
_JSON_TYPE = 'json_type("fields", %s)'


def _sqlite(segment: LeadFilter, sql: list[str], args: list[Any]) -> None:
    for tag in segment.all_tags:
        sql.append(_HAS_TAG.format("%s"))
        args.append(tag)
    if segment.any_tags:
        sql.append(_HAS_TAG.format(", ".join("%s" for _ in segment.any_tags)))
        args.extend(segment.any_tags)
    if segment.no_tags:
        sql.append("NOT " + _HAS_TAG.format(", ".join("%s" for _ in segment.no_tags)))
        args.extend(segment.no_tags)
    for key, value in segment.fields:
        path = f"$.{key}"  # a key is [a-z][a-z0-9_]*: a path as it is
        if isinstance(value, bool):
            sql.append(f"{_JSON_TYPE} = %s")
            args.extend([path, "true" if value else "false"])
        elif isinstance(value, str):
            extract = f'{SQLITE_FOLD}(json_extract("fields", %s))'
            sql.append(f"{_JSON_TYPE} = 'text' AND {extract} = %s")
            args.extend([path, path, fold(value)])
        else:
            sql.append(f"{_JSON_TYPE} IN ('integer', 'real') AND json_extract(\"fields\", %s) = %s")
            args.extend([path, path, _sqlite_number(value)])
    if segment.search:  # no index: each of the account's leads is tested
        sql.append(f'{SQLITE_SEARCH}("name", "email_key", %s)')
        args.append(segment.search)


def _sqlite_number(value: float) -> float:
    """An integer past SQLite's 64 bits as the real SQLite's JSON reads it as (the driver
    cannot bind it)."""
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return float(value)
    return value


def page(kind: Kind, account_id: str, query: LeadQuery, columns: str) -> tuple[str, list[Any]]:
    """A page of the segment, newest first, after the query's cursor: ``query.limit + 1``
    rows (one more tells whether there is a next page)."""
    clause, args = where(kind, account_id, query.filter)
    clause, args = _after(query, clause, args)
    return f'SELECT {columns} FROM "leads"{clause}{_NEWEST_FIRST} LIMIT {_rows(query)}', args


# Postgres, a segment that names tags to have, or a search: a page in two tries
# (PiccoloLeadRepository).
# The planner walks the account's listing index and tests each lead's tags, which is
# right when matches are spread over time, and reads the whole account when they are not
# (a tag no lead has; tagged leads all older than many untagged ones: bench/README.md,
# "Tags and segments"). So: first the page among the newest ``window`` leads after the
# cursor (a bounded walk), and only if that is not a full page, the page of the matches
# themselves, found by a GIN index (tags, or the search's trigrams) and sorted (bounded by
# how many match).


def narrows(segment: LeadFilter) -> bool:
    """The segment has a condition an index of its own can find (tags, a search)."""
    return bool(segment.all_tags or segment.any_tags or segment.search)


def page_in_window(
    account_id: str, query: LeadQuery, columns: str, window: int
) -> tuple[str, list[Any]]:
    base, args = _after(query, ' WHERE "account_id" = %s', [account_id])
    conditions, filter_args = _conditions("postgres", query.filter)
    newest = f'SELECT * FROM "leads"{base}{_NEWEST_FIRST} LIMIT {int(window)}'
    text = (
        f'SELECT {columns} FROM ({newest}) AS "leads" WHERE {" AND ".join(conditions)}'
        f"{_NEWEST_FIRST} LIMIT {_rows(query)}"
    )
    return text, [*args, *filter_args]


def page_of_matches(account_id: str, query: LeadQuery, columns: str) -> tuple[str, list[Any]]:
    clause, args = where("postgres", account_id, query.filter)
    clause, args = _after(query, clause, args)
    matches = f'SELECT {columns} FROM "leads"{clause}'
    text = f'WITH "m" AS MATERIALIZED ({matches}) SELECT * FROM "m"{_NEWEST_FIRST}'
    return f"{text} LIMIT {_rows(query)}", args


_NEWEST_FIRST = ' ORDER BY "created_at" DESC, "lead_id" DESC'


def _rows(query: LeadQuery) -> int:
    return int(query.limit) + 1


def _after(query: LeadQuery, clause: str, args: list[Any]) -> tuple[str, list[Any]]:
    if query.after is None:
        return clause, args
    at, last_id = query.after.created_at, query.after.lead_id
    clause += ' AND ("created_at" < %s OR ("created_at" = %s AND "lead_id" < %s))'
    return clause, [*args, at, at, last_id]


def count(
    kind: Kind, account_id: str, segment: LeadFilter, at_most: int | None = None
) -> tuple[str, list[Any]]:
    """The segment's count; with ``at_most``, of its first ``at_most`` leads found only."""
    clause, args = where(kind, account_id, segment)
    if at_most is None:
        return f'SELECT count(*) AS "count" FROM "leads"{clause}', args
    matched = f'SELECT 1 FROM "leads"{clause} LIMIT {int(at_most)}'
    return f'SELECT count(*) AS "count" FROM ({matched}) AS "matched"', args


def field_keys(kind: Kind, account_id: str, segment: LeadFilter) -> tuple[str, list[Any]]:
    """The distinct custom field keys of the segment's leads, sorted."""
    clause, args = where(kind, account_id, segment)
    if kind == "postgres":
        keys = f'SELECT DISTINCT jsonb_object_keys("fields") AS "key" FROM "leads"{clause}'
    else:
        each = 'json_each("leads"."fields") AS "j"'
        keys = f'SELECT DISTINCT "j"."key" AS "key" FROM "leads", {each}{clause}'
    return keys, args
