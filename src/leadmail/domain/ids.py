"""The shape of the ids the service makes: a prefix, then URL-safe base64 (what
``secrets.token_urlsafe`` writes), within the width of an id column. Any other text names
nothing the service could have made, and is refused before it reaches storage."""

from __future__ import annotations

import re

MAX_ID_LENGTH = 40  # the id columns' width (adapters/db/tables.py)


def id_shape(prefix: str) -> re.Pattern[str]:
    """The ids of ``prefix``: the prefix, then 1 to what the column leaves of ``A-Z a-z 0-9
    _ -``."""
    return re.compile(f"^{re.escape(prefix)}[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH - len(prefix)}}}$")
