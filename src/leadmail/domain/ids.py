"""The ids the service makes: a prefix naming the kind (``ld_``, ``msg_``, ``imp_``,
``cmp_``), then 128 random bits, URL-safe; and the rule an id of each kind obeys, which the
OpenAPI document states (a path's id, an answer's)."""

from __future__ import annotations

import re
import secrets

ID_BYTES = 16  # 128 random bits: 22 URL-safe characters
MAX_ID_LENGTH = 40  # the id columns' width (adapters/db/tables.py)


def new_id(prefix: str) -> str:
    """An opaque, unguessable id of the kind ``prefix`` names."""
    return prefix + secrets.token_urlsafe(ID_BYTES)


def id_rule(prefix: str) -> re.Pattern[str]:
    """What an id of the kind ``prefix`` names looks like: the prefix, then 1 to what the
    column leaves of ``A-Z a-z 0-9 _ -`` (``new_id`` makes 22). Any other text names
    nothing the service could have made, and is refused before it reaches storage."""
    return re.compile(f"^{re.escape(prefix)}[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH - len(prefix)}}}$")
