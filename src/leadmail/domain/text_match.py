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
    name folded with its hyphens as spaces; then, for an address or a name that holds a
    hyphen, a space and it again without its hyphens (``smith-jones`` as ``smithjones``:
    what a search holding a hyphen looks for). A search matches where it follows a space:
    the address's beginning, or a word's of the name (Postgres indexes this very text:
    lead_segments.SEARCH_TEXT)."""
    folded = fold(name)
    text = f" {email_key} {folded.replace('-', ' ')}"
    if "-" in email_key:
        text += f" {email_key.replace('-', '')}"
    if "-" in folded:
        text += f" {folded.replace('-', '')}"
    return text


def search_matches(name: str, email_key: str, search: str) -> bool:
    """``search`` (folded) begins a word of ``name`` (after its start, a space or a
    hyphen) or begins the address; a search holding a hyphen begins a word of the name or
    the address as written with a hyphen there (``mary-j`` finds Mary-Jane)."""
    text = search_text(name, email_key)
    return f" {search_form(search)}" in text


def search_form(search: str) -> str:
    """The search as the text holds it: without its hyphens, which match the names and
    addresses written with them (a search of hyphens alone stays as it is). One form, so
    that its trigrams are the whole search's (``smithj`` has ``thj``: few candidates)."""
    joined = search.replace("-", "")
    return joined if joined.strip() else search


def field_matches(stored: FieldValue, wanted: FieldValue) -> bool:
    """A custom field against a filter's value: text in any case, other values by JSON
    type (``same_value``)."""
    if isinstance(stored, str) and isinstance(wanted, str):
        return fold(stored) == fold(wanted)
    return same_value(stored, wanted)
