"""Tests that need a tool from the dev dependency group: without it they skip, except when
``CI=true``, where a skipped test would hide that the tool is gone (as for Postgres,
tests/postgres.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from tests.postgres import in_ci


def missing(tool: str) -> NoReturn:
    message = f"{tool} is needed (the dev dependency group: `make install`)"
    if in_ci():
        pytest.fail(f"{message}; in CI a skipped test is a failure", pytrace=False)
    pytest.skip(message)


def require_module(name: str) -> None:
    """Skip (fail in CI) unless the module ``name`` can be imported."""
    if importlib.util.find_spec(name) is None:
        missing(name)


def require_executable(name: str) -> Path:
    """The console script ``name`` installed beside this interpreter (the project's
    environment, whose bin/ also holds the tools a script may call in turn)."""
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        missing(name)
    return path
