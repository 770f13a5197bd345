"""Query parameters an operation does not take are refused (422 naming each), on every
route alike: the names an operation takes are those its handler declares, read from the
app once it is built, so a new handler is covered without a list to keep. So is a value
holding a control character (C0 or DEL; a NUL is text Postgres cannot store), whatever
the parameter: no filter, cursor or id has a use for one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from litestar import Litestar, Request
from litestar.routes import HTTPRoute

from leadmail.domain.errors import FieldError, ValidationFailed

# A handler's ``opt`` key: prefixes of names it reads from the query string itself (a
# segment's ``field.<key>``), which no declaration can list.
QUERY_PREFIXES = "query_prefixes"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
NO_CONTROL = "must not contain control characters (NUL, line breaks, tabs and the like)"


class QueryNames:
    """The query parameter names each handler takes. ``learn`` reads them from a built
    app; ``check`` refuses a request that sends any other (a request without a query
    string costs one test)."""

    def __init__(self) -> None:
        self._taken: dict[int, tuple[frozenset[str], tuple[str, ...]]] = {}

    def learn(self, app: Litestar, skip_prefixes: tuple[str, ...] = ()) -> None:
        """The app's routes but those under ``skip_prefixes`` (the document's own) and the
        discovery handlers (a browser's CORS preflight carries the query it will send)."""
        for route in app.routes:
            if not isinstance(route, HTTPRoute) or route.path.startswith(skip_prefixes):
                continue
            for method, (handler, model) in route.route_handler_map.items():
                if method == "OPTIONS":
                    continue
                names = frozenset(p.field_alias for p in model.expected_query_params)
                self._taken[id(handler)] = (names, tuple(handler.opt.get(QUERY_PREFIXES, ())))

    def check(self, request: Request[Any, Any, Any]) -> None:
        if not request.scope["query_string"]:
            return
        taken = self._taken.get(id(request.scope["route_handler"]))
        if taken is None:  # skipped by learn
            return
        names, prefixes = taken
        unknown = [
            name
            for name in dict.fromkeys(request.query_params.keys())
            if name not in names and not (prefixes and name.startswith(prefixes))
        ]
        if unknown:
            problem = _not_taken(names, prefixes)
            raise ValidationFailed([FieldError(name, problem) for name in unknown])
        controlled = [
            name for name, value in request.query_params.multi_items() if _CONTROL.search(value)
        ]
        if controlled:
            raise ValidationFailed(
                [FieldError(name, NO_CONTROL) for name in dict.fromkeys(controlled)]
            )


def _not_taken(names: Iterable[str], prefixes: tuple[str, ...]) -> str:
    listed = [f"`{name}`" for name in sorted(names)] + [f"`{p}<key>`" for p in prefixes]
    if not listed:
        return "is not a parameter of this operation, which takes none"
    return f"is not a parameter of this operation, which takes {', '.join(listed)}"
