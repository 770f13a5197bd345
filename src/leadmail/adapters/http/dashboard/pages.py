"""How a dashboard page is answered: a template with what every page shows (the user, the
navigation), and a form shown again with the API's own words next to each field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litestar import Request
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.segments import LeadFilter

# The navigation, in order: (section, title, path).
# A filter's count is counted up to this many leads, and shown as "more than" beyond: its
# cost is bounded by it, not by the account (a broad search at 1,000,000 leads reads
# 200,000 matches to count them, 0.4-0.7 s). An account's total is kept, so always exact.
COUNT_UP_TO = 10_000


def shown_count(count: int, segment: LeadFilter) -> str:
    """A segment's count asked ``at_most=COUNT_UP_TO + 1``, as the pages show it (the
    empty segment's, every lead, is exact)."""
    if count > COUNT_UP_TO and segment != LeadFilter():
        return f"more than {COUNT_UP_TO:,}"
    return f"{count:,}"


SECTIONS = (
    ("overview", "Overview", f"{DASHBOARD}/"),
    ("leads", "Leads", f"{DASHBOARD}/leads"),
    ("imports", "Import", f"{DASHBOARD}/imports"),
    ("campaigns", "Campaigns", f"{DASHBOARD}/campaigns"),
    ("templates", "Templates", f"{DASHBOARD}/templates"),
    ("suppressions", "Suppressions", f"{DASHBOARD}/suppressions"),
    ("keys", "Keys and senders", f"{DASHBOARD}/keys"),
)


def page(
    request: Request[Any, Any, Any],
    template_name: str,
    section: str,
    title: str,
    *,
    status_code: int = 200,
    **context: Any,
) -> Template:
    """A signed-in page of ``section``."""
    return Template(
        template_name=template_name,
        status_code=status_code,
        context={
            "session": session_of(request),
            "sections": SECTIONS,
            "section": section,
            "title": title,
            **context,
        },
    )


def public_page(
    template: str,
    title: str,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> Template:
    """A page shown without a session (sign-in, password)."""
    return Template(
        template_name=template,
        status_code=status_code,
        headers=dict(headers or {}),
        context={"session": None, "title": title, **context},
    )


def field_errors(error: ValidationFailed) -> dict[str, str]:
    """Each field's message as the API words it (the first, for a field named twice),
    keyed by the field's top name (``fields.city`` under ``fields``)."""
    found: dict[str, str] = {}
    for item in error.errors:
        found.setdefault(_top(item), str(item))
    return found


def _top(item: FieldError) -> str:
    return item.field.split(".", 1)[0].split("[", 1)[0]


def see_other(path: str, **query: str) -> Redirect:
    """After a change: the page that shows it (POST, redirect, GET)."""
    return Redirect(path, query_params=dict(query) or None, status_code=303)


def form_values(form: Mapping[str, Any], *names: str) -> dict[str, str]:
    return {name: str(form.get(name, "") or "") for name in names}


def query_of(request: Request[Any, Any, Any]) -> dict[str, str]:
    """The query's parameters, the last value of each."""
    return {k: v for k, v in request.query_params.items() if isinstance(v, str)}


def key_values(text: str) -> dict[str, str]:
    """``key: value`` lines, as the forms' text areas take custom fields, template
    variables and sample values (a line without ``:`` is a key with an empty value)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            key, _, value = line.partition(":")
            found[key.strip()] = value.strip()
    return found
