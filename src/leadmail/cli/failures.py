"""What the ``leadmail`` command says when it cannot do its work, for every command: one
line on stderr naming the setting (or the file and line, or the database) and what it
expects, and the exit code: 2 for configuration (retrying will not help: fix a setting, a
file, create the database), 1 for an outage (a server that does not answer: retry) or a
refusal of the work itself. Never a traceback for any of these."""

from __future__ import annotations

from dataclasses import dataclass

from leadmail.config import ConfigError
from leadmail.domain.errors import LeadmailError
from leadmail.domain.templates import InvalidTemplate
from leadmail.ports.errors import StorageMisconfigured, StorageUnavailable
from leadmail.ports.rate_limits import LimiterUnavailable

CONFIGURATION = 2
OUTAGE = 1  # and any other refusal of the work (no such key, say)


@dataclass(frozen=True, slots=True)
class Failure:
    line: str
    exit_code: int


def failure_of(error: BaseException) -> Failure | None:
    """The line and exit code for ``error``; None for one that is no known failure (a bug:
    its traceback is shown)."""
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return failure_of(error.exceptions[0])  # a task group's one failure
    if isinstance(error, ConfigError):
        return _said(f"configuration error: {error}", CONFIGURATION)
    if isinstance(error, InvalidTemplate):  # only the catalog's files reach the command
        return _said(f"LEADMAIL_TEMPLATES_DIR: {error}", CONFIGURATION)
    if isinstance(error, StorageUnavailable):
        remedy = f" ({error.remedy}, or set LEADMAIL_DATABASE_URL)" if error.remedy else ""
        code = CONFIGURATION if isinstance(error, StorageMisconfigured) else OUTAGE
        return _said(f"{error.message}{remedy}", code)
    if isinstance(error, LimiterUnavailable):
        return _said(f"{error.message} (retry when it is up, or set LEADMAIL_REDIS_URL)", OUTAGE)
    if isinstance(error, LeadmailError):
        return _said(error.message, OUTAGE)
    return None


def _said(text: str, exit_code: int) -> Failure:
    return Failure("leadmail: " + " ".join(text.splitlines()), exit_code)
