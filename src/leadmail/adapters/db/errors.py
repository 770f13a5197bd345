"""Driver errors (asyncpg, sqlite3) turned into port errors: the only way they leave
this package."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3

import asyncpg

from leadmail.ports.errors import PortError, StorageUnavailable, UnstorableText

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, unreachable; ConnectionError is a subclass
    asyncio.TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.AdminShutdownError,
    asyncpg.QueryCanceledError,
    # The server answers but this database or role is not there: unavailable to us.
    asyncpg.InvalidCatalogNameError,
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.InvalidPasswordError,
    # SQLite: locked past the busy timeout, an unopenable file.
    sqlite3.OperationalError,
)

# Postgres cannot store the text: a NUL, or a character its encoding lacks.
_UNSTORABLE: tuple[type[BaseException], ...] = (
    asyncpg.CharacterNotInRepertoireError,
    asyncpg.UntranslatableCharacterError,
)


def is_unique_violation(error: BaseException) -> bool:
    if isinstance(error, asyncpg.UniqueViolationError):
        return True
    return isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error)


class _TranslateErrors:
    """A plain class rather than @contextmanager: it wraps every query, and a
    generator-based context manager costs a generator per use."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, _: type[BaseException] | None, error: BaseException | None, __: object
    ) -> None:
        if error is not None and isinstance(error, _UNAVAILABLE):
            raise StorageUnavailable() from error
        if error is not None and isinstance(error, _UNSTORABLE):
            raise UnstorableText() from error


_TRANSLATE_ERRORS = _TranslateErrors()


def translate_errors() -> contextlib.AbstractContextManager[None]:
    """Turn "the database is not there" into StorageUnavailable, and text it cannot store
    into UnstorableText (a 422); let the rest through."""
    return _TRANSLATE_ERRORS


REFUSED = "The database refused the change"


class _Refused:
    """refused()'s context manager: a plain class, as _TranslateErrors."""

    __slots__ = ("_duplicate", "_message")

    def __init__(self, message: str, duplicate: str) -> None:
        self._message = message
        self._duplicate = duplicate

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, _: type[BaseException] | None, error: BaseException | None, __: object
    ) -> None:
        if error is not None and isinstance(error, (asyncpg.PostgresError, sqlite3.Error)):
            if isinstance(error, _UNSTORABLE):
                raise UnstorableText() from error
            if self._duplicate and is_unique_violation(error):
                raise PortError(self._duplicate) from error
            raise PortError(self._message) from error


_REFUSED = _Refused(REFUSED, "")  # the usual words: one instance for every use


def refused(
    message: str = REFUSED, *, duplicate: str = ""
) -> contextlib.AbstractContextManager[None]:
    """What translate_errors lets through (a broken constraint, a value too long for its
    column) still leaves as a port error, never as the driver's. ``duplicate`` words a
    unique violation."""
    if not duplicate and message == REFUSED:
        return _REFUSED
    return _Refused(message, duplicate)
