"""How a lead search (``q``) and a custom text filter compare text: folded as Postgres's
lower() folds it, a search at the start of a word of the name or of the address. The one
definition every store follows (memory calls it, SQLite is given it, Postgres indexes the
same text: adapters/db/lead_segments.py)."""

from __future__ import annotations

from leadmail.domain.custom_fields import FieldValue, same_value


def fold(text: str) -> str:
    """Text as a search and a custom text field compare it: lower-cased (Unicode), as
    Postgres's lower() does under a UTF-8 locale; SQLite calls this very function."""
    return text.lower()


def search_text(name: str, email_key: str) -> str:
    """What a search looks in: a space, the address (lower-cased already), a space, the
    name folded with its hyphens as spaces. A search matches where it follows a space:
    the address's beginning, or a word's of the name (Postgres indexes this very text:
    lead_segments.SEARCH_TEXT)."""
    return f" {email_key} {fold(name).replace('-', ' ')}"


def search_matches(name: str, email_key: str, search: str) -> bool:
    """``search`` (folded) begins a word of ``name`` (after its start, a space or a
    hyphen; a hyphen in the search matches either) or begins the address."""
    text = search_text(name, email_key)
    return any(f" {form}" in text for form in search_forms(search))


def search_forms(search: str) -> tuple[str, ...]:
    """The search as the address has it, and as a name has it (hyphens as spaces)."""
    spaced = search.replace("-", " ")
    return (search,) if spaced == search else (search, spaced)


def field_matches(stored: FieldValue, wanted: FieldValue) -> bool:
    """A custom field against a filter's value: text in any case, other values by JSON
    type (``same_value``)."""
    if isinstance(stored, str) and isinstance(wanted, str):
        return fold(stored) == fold(wanted)
    return same_value(stored, wanted)
