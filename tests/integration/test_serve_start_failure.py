"""`leadmail serve` whose start-up fails after its pre-flight passed (the database gone
in between, say): one line naming the cause and the failure's exit code, as the
pre-flight would have said it, not the traceback Litestar hands uvicorn to log.

The command runs in a Python process of its own (its logging set up there, as `leadmail`
sets it), with the adapters' opening made to fail: no real failure comes reliably
between the pre-flight and the start-up."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.network import free_port

SERVE = textwrap.dedent(
    """
    import contextlib, sys
    from leadmail.bootstrap import Adapters
    from leadmail.cli import main
    from leadmail.ports.errors import StorageUnavailable

    ERROR = {error}

    def failing(cls, settings, **_):
        adapters = Adapters.in_memory()

        @contextlib.asynccontextmanager
        async def opened(*, apply_migrations):
            raise ERROR
            yield adapters

        adapters.opened = opened
        return adapters

    Adapters.from_settings = classmethod(failing)
    sys.exit(main(["serve", "--port", "{port}"]))
    """
)


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            'StorageUnavailable("The database is unavailable: db:5432 refused")',
            "leadmail: The database is unavailable: db:5432 refused",
        ),
        ('RuntimeError("a bug")', None),
    ],
)
def test_a_start_up_failing_after_the_pre_flight_is_said_in_one_line(
    tmp_path: Path, error: str, said: str | None
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "LEADMAIL_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.db'}",
        "LEADMAIL_LOG_FORMAT": "json",
    }
    script = SERVE.format(error=error, port=free_port())

    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 1, done.stderr
    if said is None:  # not a known failure: uvicorn logs its traceback, as for any bug
        assert "RuntimeError: a bug" in done.stderr
        return
    lines = [text for text in done.stderr.splitlines() if text.startswith("leadmail: ")]
    assert lines == [said], done.stderr
    assert "Traceback" not in done.stderr
