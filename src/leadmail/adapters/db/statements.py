"""Statements and row mapping derived from a table's one description, its Piccolo class.

``Mapped(Leads, Lead)`` knows the table's columns and the domain type's fields, and from
them builds, once, the SQL text of each statement for both backends (``$1`` for
Postgres, ``{}`` for Piccolo's QueryString on SQLite) and the functions that turn a domain
value into statement arguments and a row back into a domain value. A column and a field
of the same name map to each other; a field stored under another name, or a column
computed from the value, is said once in the ``Mapped`` call.

So a new field of a lead is a field of ``Lead``, a column of ``Leads`` and a migration:
every statement and mapping here follows.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from piccolo.table import Table

from leadmail.adapters.db.column_values import Encode, decoder_for, encoder_for

D = TypeVar("D")
Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Statement:
    """One SQL statement in both backends' spellings, and how to take its arguments from
    a domain value (``args``), for statements whose parameters are all columns."""

    postgres: str
    sqlite: str  # placeholders are {}: run through Piccolo's QueryString
    args: Callable[[Any], tuple[Any, ...]]
    writes: bool  # anything but a SELECT: on SQLite, it queues for the one writer


def _quote(name: str) -> str:
    return f'"{name}"'


class Mapped(Generic[D]):
    def __init__(
        self,
        table: type[Table],
        domain: type[D],
        *,
        stored_as: Mapping[str, str] | None = None,
        computed: Mapping[str, Callable[[D], Any]] | None = None,
        joined: Sequence[str] = (),
    ) -> None:
        """``stored_as``: field -> column, for a field whose column has another name.
        ``computed``: column -> function of the domain value, for a column that is no
        field (a surrogate id). ``joined``: fields read from another table (rows that
        fill them come from a join that names them)."""
        self.table = table
        self.name: str = table._meta.tablename
        self.columns: tuple[str, ...] = tuple(c._meta.db_column_name for c in table._meta.columns)
        stored_as = dict(stored_as or {})
        computed = dict(computed or {})
        hints = typing.get_type_hints(domain)
        fields = [f.name for f in dataclasses.fields(domain)]  # type: ignore[arg-type]
        column_of = {f: stored_as.get(f, f) for f in fields}
        field_of = {c: f for f, c in column_of.items()}
        self._computed: dict[str, Encode] = computed  # column -> f(domain value)
        # column -> (the attribute it holds, how that attribute's value is stored; None:
        # as it is)
        self._stored: dict[str, tuple[str, Encode | None]] = {}
        for column in self.columns:
            if column in computed:
                continue
            attribute = field_of.get(column, column)
            if attribute not in hints and not hasattr(domain, attribute):
                continue  # a column this type does not fill (set by a statement of its own)
            encode = encoder_for(hints.get(attribute), table._meta.get_column_by_name(column))
            self._stored[column] = (attribute, encode)
        decoders = [(column_of[f], decoder_for(hints[f])) for f in fields]
        missing = [c for c, _ in decoders if c not in self.columns and c not in joined]
        if missing:
            raise TypeError(f"{self.name} has no column for {domain.__name__}: {missing}")
        self._decoders = decoders
        self._domain = domain

    @functools.cached_property
    def insert(self) -> Statement:
        """A new row: every column's value from the domain value."""
        return self.statement(
            f"INSERT INTO {_quote(self.name)} ({self._all()})"
            f" VALUES ({', '.join('%s' for _ in self.columns)})",
            self.columns,
        )

    # Rows.

    def from_row(self, row: Row) -> D:
        return self._domain(*[decode(row[column]) for column, decode in self._decoders])

    def to_dict(self, value: D) -> dict[str, Any]:
        """Every column's value, by column name (for Piccolo's ``Table(**row)``)."""
        filled = [c for c in self.columns if c in self._stored or c in self._computed]
        return dict(zip(filled, self.getter(filled)(value), strict=True))

    def getter(self, columns: Sequence[str]) -> Callable[[D], tuple[Any, ...]]:
        """The values of ``columns`` from a domain value, in that order: the attributes
        read in one C call, then the few stored otherwise (JSON, enums) encoded in place,
        then the computed ones."""
        if not columns:
            return _no_args
        stored = [c for c in columns if c not in self._computed]
        attributes = operator.attrgetter(*[self._stored[c][0] for c in stored]) if stored else None
        encoded = [
            (i, encode) for i, c in enumerate(stored) if (encode := self._stored[c][1]) is not None
        ]
        computed = [(i, self._computed[c]) for i, c in enumerate(columns) if c in self._computed]
        if attributes is not None and not encoded and not computed:
            if len(columns) == 1:
                return lambda value: (attributes(value),)
            return attributes
        single = len(stored) == 1

        def values(value: D) -> tuple[Any, ...]:
            if attributes is None:
                row: list[Any] = []
            elif single:
                row = [attributes(value)]
            else:
                row = list(attributes(value))
            for i, encode in encoded:
                row[i] = encode(row[i])
            for i, compute in computed:
                row.insert(i, compute(value))
            return tuple(row)

        return values

    # Statements: built once, at start-up; ``%s`` stands for each parameter in turn.

    def statement(self, text: str, params: Sequence[str] = ()) -> Statement:
        """A statement written with ``%s`` placeholders; ``params`` names the columns
        whose values ``args`` takes from a domain value (none for a statement whose
        arguments the caller passes itself)."""
        return plain_statement(text, self.getter(params) if params else _no_args)

    def select(self, *where: str, columns: Sequence[str] = ()) -> Statement:
        """``columns`` (all by default) of the rows whose ``where`` columns equal the
        arguments."""
        shown = ", ".join(map(_quote, columns)) if columns else self._all()
        return self.statement(f"SELECT {shown} FROM {_quote(self.name)}{_where(where)}")

    def update(self, assign: Sequence[str], where: Sequence[str], *, returning: bool) -> Statement:
        """Set ``assign`` where ``where`` match; arguments (from the value) in that order."""
        sets = ", ".join(f"{_quote(c)} = %s" for c in assign)
        tail = f" RETURNING {self._all()}" if returning else ""
        return self.statement(
            f"UPDATE {_quote(self.name)} SET {sets}{_where(where)}{tail}", (*assign, *where)
        )

    def delete(self, *where: str) -> Statement:
        """Delete the matching rows, returning their primary keys."""
        key = _quote(self.table._meta.primary_key._meta.db_column_name)
        return self.statement(f"DELETE FROM {_quote(self.name)}{_where(where)} RETURNING {key}")

    def _all(self) -> str:
        return ", ".join(map(_quote, self.columns))


def _where(columns: Sequence[str]) -> str:
    if not columns:
        return ""
    return " WHERE " + " AND ".join(f"{_quote(c)} = %s" for c in columns)


def plain_statement(text: str, args: Callable[[Any], tuple[Any, ...]] | None = None) -> Statement:
    """A statement written with ``%s`` placeholders, in both spellings; its arguments
    passed by the caller unless ``args`` takes them from a value."""
    count = text.count("%s")
    postgres = text
    for number in range(1, count + 1):
        postgres = postgres.replace("%s", f"${number}", 1)
    return Statement(
        postgres=postgres,
        sqlite=text.replace("%s", "{}"),
        args=args or _no_args,
        writes=not text.startswith("SELECT"),
    )


def _no_args(_: Any) -> tuple[Any, ...]:
    return ()
