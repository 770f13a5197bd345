"""A segment's query parameters (domain/segments.py) as the document shows them, and the
parameters of a request as the domain's parser reads them.

The handlers declare every named parameter so that the document lists it, but the
segment is parsed from the query string as sent: ``field.<key>`` cannot be declared, and
an unknown or repeated parameter must be refused by name, not ignored."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request
from litestar.params import Parameter

from leadmail.adapters.http.query_names import QUERY_PREFIXES
from leadmail.domain.custom_fields import MAX_FIELD_TEXT
from leadmail.domain.segments import FIELD_PREFIX, MAX_SEARCH, LeadFilter

# The options of a handler that takes a segment: ``field.<key>`` is read as sent.
SEGMENT_OPT = {QUERY_PREFIXES: (FIELD_PREFIX,)}
# The operation descriptions: what no parameter can say.
SEGMENT_TEXT = (
    "Filters (all optional, combined with AND): `tag` (repeatable: the lead has every one),"
    " `any_tag` (repeatable: at least one), `not_tag` (repeatable: none), `source`,"
    " `email` (the same mailbox, any case), `phone` (as typed), `created_after` and"
    " `created_before` (RFC 3339, strictly after / before), and `field.<key>=<value>`: the"
    " custom field `<key>` has exactly that value, where `true` and `false` match booleans"
    " and a JSON number (`42`, `4.5`) matches numbers, anything else text (at most"
    f" {MAX_FIELD_TEXT} characters), text in any case (`Leeds` finds `leeds`); and `q`: a"
    " search, the beginning of any word of the name (after a space or a hyphen) or of the"
    f" address, in any case (at most {MAX_SEARCH} characters; blank: no search). Tags are"
    " compared lower-cased and trimmed."
    " An unknown parameter, one given twice that is not repeatable, or a malformed value:"
    " 422 naming the parameter."
)

Tag = Annotated[
    list[str] | None,
    Parameter(description="Repeatable: leads that have every one of these tags"),
]
AnyTag = Annotated[
    list[str] | None,
    Parameter(description="Repeatable: leads that have at least one of these tags"),
]
NotTag = Annotated[
    list[str] | None,
    Parameter(description="Repeatable: leads that have none of these tags"),
]
Email = Annotated[
    str | None, Parameter(description="The lead's email, in any case (the same mailbox)")
]
Source = Annotated[str | None, Parameter(description="The lead's source, exactly")]
Phone = Annotated[
    str | None, Parameter(description="The lead's phone as typed (spaces around ignored)")
]
SEARCH_TEXT = (
    "A search: leads a word of whose name (after a space or a hyphen), or whose address,"
    " begins with this, in any case (`ada` finds Ada Lovelace, Tom Adams and ada@x.org; a"
    " hyphen matches a hyphen or a space; `%` and `_` are plain characters). Blank: no"
    " search"
)
Search = Annotated[str | None, Parameter(description=SEARCH_TEXT)]  # rules: parameter_rules
CreatedAfter = Annotated[
    str | None, Parameter(description="RFC 3339: leads created strictly after this moment")
]
CreatedBefore = Annotated[
    str | None, Parameter(description="RFC 3339: leads created strictly before this moment")
]


def query_pairs(request: Request[Any, Any, Any], *, paging: bool) -> list[tuple[str, str]]:
    """The query parameters as sent, (name, value) in order; ``paging``: without
    ``limit`` and ``cursor``, which the listing reads itself."""
    pairs: list[tuple[str, str]] = list(request.query_params.multi_items())
    if not paging:
        return pairs
    return [(name, value) for name, value in pairs if name not in ("limit", "cursor")]


def segment_of(request: Request[Any, Any, Any]) -> LeadFilter:
    return LeadFilter.parse(query_pairs(request, paging=False))
