"""What every part of the benchmark driver shares: where things are, and the progress log
(on stderr: stdout is for the table)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the venv's: leadmail, uvicorn, py-spy


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def relative(argv: list[str]) -> list[str]:
    """The arguments that are paths in the repository, relative to it."""
    return [str(Path(a).relative_to(ROOT)) if a.startswith(str(ROOT)) else a for a in argv]
