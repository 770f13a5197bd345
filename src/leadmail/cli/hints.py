"""A next step said as a command line the user can paste: the program named as they started
it (``.venv/bin/leadmail`` under ``make run``), or ``leadmail`` when that is on PATH."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

PROGRAM = "leadmail"


def command_line(*args: str) -> str:
    """``leadmail keys create --account demo``, each argument quoted for a shell."""
    return shlex.join([_program(), *args])


def _program() -> str:
    started = sys.argv[0] if sys.argv else ""
    if Path(started).name != PROGRAM:  # `python -m leadmail.cli`, or embedded
        return PROGRAM
    on_path = shutil.which(PROGRAM)
    if on_path is not None and Path(on_path).resolve() == Path(started).resolve():
        return PROGRAM
    return started
