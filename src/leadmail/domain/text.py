"""One-line text: what a name, a source, a subject or a display name may not hold.

Anything a mail library or a terminal might take for a line break (CR, LF, VT, FF, NEL,
the Unicode line and paragraph separators), every other control but tab, and what changes
what a reader sees without being seen: bidirectional controls, which reorder the text
around them (``"Acme\\u202eBcc: evil@x.example"``), and invisible characters. The two
joiners (ZWNJ, ZWJ) are parts of words in Persian and Indic scripts and of emoji
(👩‍💻): they are refused only where they join nothing (first, last, next to a space or to
each other).
"""

from __future__ import annotations

import re

# C0 controls but tab, DEL, C1 controls (NEL among them); the line and paragraph
# separators; the bidirectional embeddings, overrides and isolates, and the marks (LRM,
# RLM, ALM); the zero-width space, the word joiner and the byte order mark (ZWNBSP).
# (As a regular expression's class, escaped: the OpenAPI document states it too.)
NOT_IN_A_LINE = (
    r"\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029"
    r"\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
    r"\u200b\u2060\ufeff"
)
JOINERS = r"\u200c\u200d"
# One match is a character a line may not hold, or a joiner that joins nothing.
BROKEN_LINE = re.compile(
    f"[{NOT_IN_A_LINE}]|(?<![^\\s{JOINERS}])[{JOINERS}]|[{JOINERS}](?![^\\s{JOINERS}])"
)
NOT_ONE_LINE = (
    "must be one line: no line breaks, control characters, bidirectional controls or"
    " invisible characters"
)


def breaks_line(text: str) -> bool:
    """Whether ``text`` holds what BROKEN_LINE finds. A printable text holds none of it
    (the check in C answers for almost every text; the expression runs for the others)."""
    return not text.isprintable() and BROKEN_LINE.search(text) is not None
