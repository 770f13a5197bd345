"""A page of an account's message log (domain/message_listing.py) as SQL, one text for
Postgres and SQLite.

The filters an index serves (the account, ``to`` through ``message_addresses``,
``template_id``, ``campaign_id``, the time bounds and the cursor) make the walk: the
matching messages in listing order, newest first. ``status`` has no index (a message's
status changes with every provider event, and an index on it would cost each of those
updates an entry in every index of the table), so with it the page is the matches among
the first ``window`` rows of the walk, and the row at the window's end (``edge`` 1), when
the walk reaches that far, is where the next page goes on from.

Every value is a parameter; only column names and fixed operators are written into the
text, which depends on which filters are given, not on their values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from leadmail.domain.message_listing import MessageQuery


def page(
    account_id: str, query: MessageQuery, columns: Sequence[str], window: int
) -> tuple[str, list[Any]]:
    """The page's rows (``edge`` 0: at most ``query.limit + 1``, newest first) and, with a
    ``status`` filter, the walk's last row (``edge`` 1) when it has ``window`` rows."""
    walk, args = _walk(account_id, query, columns)
    rows = int(query.limit) + 1
    status = query.filter.status
    if status is None:
        return f'SELECT *, 0 AS "edge" FROM ({walk} LIMIT {rows}) AS "p"', args
    matches = (
        f'SELECT *, 0 AS "edge" FROM ({walk} LIMIT {int(window)}) AS "w"'
        f' WHERE "status" = %s{_NEWEST_FIRST} LIMIT {rows}'
    )
    edge = f'SELECT *, 1 AS "edge" FROM ({walk} LIMIT 1 OFFSET {int(window) - 1}) AS "e"'
    text = f'SELECT * FROM ({matches}) AS "p" UNION ALL SELECT * FROM ({edge}) AS "f"'
    return text, [*args, status.value, *args]


_NEWEST_FIRST = ' ORDER BY "created_at" DESC, "message_id" DESC'


def _walk(account_id: str, query: MessageQuery, columns: Sequence[str]) -> tuple[str, list[Any]]:
    """The messages every filter but ``status`` selects, newest first (no LIMIT)."""
    wanted = query.filter
    args: list[Any]
    shown = ", ".join(f'"m"."{name}"' for name in columns)
    if wanted.to is None:
        at = '"m"'  # the time and id the order and cursor use: the index's own columns
        source = '"messages" AS "m"'
        conditions, args = ['"m"."account_id" = %s'], [account_id]
    else:
        at = '"a"'
        source = (
            '"message_addresses" AS "a" JOIN "messages" AS "m"'
            ' ON "m"."message_id" = "a"."message_id"'
        )
        conditions = ['"a"."account_id" = %s', '"a"."address" = %s']
        args = [account_id, wanted.to]
    for column, value in (
        ("template_id", wanted.template_id),
        ("campaign_id", wanted.campaign_id),
    ):
        if value is not None:
            conditions.append(f'"m"."{column}" = %s')
            args.append(value)
    if wanted.created_after is not None:
        conditions.append(f'{at}."created_at" > %s')
        args.append(wanted.created_after)
    if wanted.created_before is not None:
        conditions.append(f'{at}."created_at" < %s')
        args.append(wanted.created_before)
    if query.after is not None:
        last_at, last_id = query.after.created_at, query.after.lead_id
        # created_at <= as well: where the index walk starts (the rest alone is a filter).
        conditions.append(
            f'{at}."created_at" <= %s AND ({at}."created_at" < %s OR {at}."message_id" < %s)'
        )
        args += [last_at, last_at, last_id]
    order = f' ORDER BY {at}."created_at" DESC, {at}."message_id" DESC'
    return f"SELECT {shown} FROM {source} WHERE {' AND '.join(conditions)}{order}", args
