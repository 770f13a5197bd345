"""cli/failures.py: the one place a failure becomes the command's one line and exit code."""

from __future__ import annotations

import pytest

from leadmail.cli.failures import CONFIGURATION, OUTAGE, Failure, failure_of
from leadmail.config import ConfigError
from leadmail.domain.errors import ApiKeyNotFound
from leadmail.domain.templates import InvalidTemplate
from leadmail.ports.errors import StorageMisconfigured, StorageUnavailable
from leadmail.ports.rate_limits import LimiterUnavailable


@pytest.mark.parametrize(
    ("error", "line", "code"),
    [
        (
            ConfigError("LEADMAIL_PORT must be at most 65535, got 70000"),
            "leadmail: configuration error: LEADMAIL_PORT must be at most 65535, got 70000",
            CONFIGURATION,
        ),
        (
            InvalidTemplate("/t/a.html:7: the body has a malformed placeholder"),
            "leadmail: LEADMAIL_TEMPLATES_DIR: /t/a.html:7: the body has a malformed placeholder",
            CONFIGURATION,
        ),
        (
            StorageMisconfigured('the database "x" does not exist on h:5432', remedy="create it"),
            'leadmail: the database "x" does not exist on h:5432'
            " (create it, or set LEADMAIL_DATABASE_URL)",
            CONFIGURATION,
        ),
        (
            StorageUnavailable("the database server h:1 cannot be reached", remedy="retry"),
            "leadmail: the database server h:1 cannot be reached"
            " (retry, or set LEADMAIL_DATABASE_URL)",
            OUTAGE,
        ),
        (  # an outage in the middle of the work: no setting to blame
            StorageUnavailable(),
            "leadmail: The database is unavailable; retry shortly",
            OUTAGE,
        ),
        (
            LimiterUnavailable("Redis at h:1 cannot be reached: connection refused"),
            "leadmail: Redis at h:1 cannot be reached: connection refused"
            " (retry when it is up, or set LEADMAIL_REDIS_URL)",
            OUTAGE,
        ),
        (ApiKeyNotFound("key_x"), "leadmail: API key 'key_x' was not found", OUTAGE),
    ],
)
def test_each_known_failure_is_one_line_and_its_exit_code(
    error: Exception, line: str, code: int
) -> None:
    assert failure_of(error) == Failure(line, code)


def test_a_task_groups_one_failure_is_said_as_itself() -> None:
    group = ExceptionGroup("unhandled errors in a TaskGroup", [ConfigError("LEADMAIL_X bad")])

    assert failure_of(group) == Failure("leadmail: configuration error: LEADMAIL_X bad", 2)


def test_a_message_of_several_lines_is_said_on_one() -> None:
    failure = failure_of(ConfigError("first\nsecond"))

    assert failure is not None
    assert failure.line == "leadmail: configuration error: first second"


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("a bug"),
        ExceptionGroup("two", [ConfigError("a"), ConfigError("b")]),
    ],
)
def test_anything_else_is_no_known_failure_and_keeps_its_traceback(error: Exception) -> None:
    assert failure_of(error) is None
