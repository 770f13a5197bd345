"""`leadmail serve` whose start-up fails after its pre-flight passed (the database gone
in between, say): one line naming the cause and the failure's exit code, as the
pre-flight would have said it, not the traceback Litestar hands uvicorn to log."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from leadmail.bootstrap import Adapters
from leadmail.cli import main
from leadmail.ports.errors import StorageUnavailable
from tests.support.network import free_port


def adapters_that_fail_to_open(error: Exception) -> Adapters:
    adapters = Adapters.in_memory()

    @contextlib.asynccontextmanager
    async def opened(*, apply_migrations: bool) -> AsyncIterator[Adapters]:
        raise error
        yield adapters  # pragma: no cover  (a generator that raises at its start)

    adapters.opened = opened  # type: ignore[method-assign]
    return adapters


@pytest.mark.parametrize(
    ("error", "line", "code"),
    [
        (StorageUnavailable("The database is unavailable: db:5432 refused"), "db:5432 refused", 1),
        (RuntimeError("a bug"), None, 1),
    ],
)
def test_a_start_up_failing_after_the_pre_flight_is_said_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    line: str | None,
    code: int,
) -> None:
    monkeypatch.setenv("LEADMAIL_DATABASE_URL", f"sqlite:///{tmp_path / 'serve.db'}")
    monkeypatch.setenv("LEADMAIL_LOG_FORMAT", "json")
    monkeypatch.setattr(
        Adapters,
        "from_settings",
        classmethod(lambda cls, settings, **_: adapters_that_fail_to_open(error)),
    )

    exit_code = main(["serve", "--port", str(free_port())])

    err = capsys.readouterr().err
    assert exit_code == code
    if line is None:  # not a known failure: uvicorn logs its traceback, as for any bug
        assert "RuntimeError: a bug" in err
        return
    said = [text for text in err.splitlines() if text.startswith("leadmail: ")]
    assert said == [f"leadmail: The database is unavailable: {line}"]
    assert "Traceback" not in err
