"""The listing commands' output: a table for people, or JSON lines for scripts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


def print_rows(columns: Sequence[str], rows: Sequence[Mapping[str, str]], *, as_json: bool) -> None:
    """Each row as one JSON object a line (``as_json``), or a table: a header of
    ``columns``, each column as wide as its widest cell."""
    if as_json:
        for row in rows:
            print(json.dumps(dict(row)))
        return
    cells = [list(columns), *([row[c] for c in columns] for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
