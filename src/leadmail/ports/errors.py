"""Errors an adapter raises through a port, translated from its driver's own."""

from __future__ import annotations

from leadmail.domain.errors import FieldError, LeadmailError, ValidationFailed


class PortError(LeadmailError):
    code = "PORT_ERROR"


class StorageUnavailable(PortError):
    """The database cannot be reached or is too busy. Safe to retry later. ``remedy``: what
    to do, when the adapter can say (the database's opening names the server it tried)."""

    code = "STORAGE_UNAVAILABLE"

    def __init__(
        self, message: str = "The database is unavailable; retry shortly", *, remedy: str = ""
    ) -> None:
        super().__init__(message)
        self.remedy = remedy


class StorageMisconfigured(StorageUnavailable):
    """The database the settings name cannot be used as they name it: it does not exist,
    refuses the login, or its SQLite file's folder is missing. Retrying will not help; the
    message names the database (never a password) and ``remedy`` says what would."""

    def __init__(self, message: str, *, remedy: str) -> None:
        super().__init__(message, remedy=remedy)


class UnstorableText(PortError, ValidationFailed):
    """The database cannot store a character of the request's text (Postgres: a NUL). The
    rules refuse such text before it reaches storage, naming its field; this is what is
    left should one ever get through: still a 422, never the driver's error."""

    code = ValidationFailed.code

    def __init__(self) -> None:
        ValidationFailed.__init__(
            self,
            [FieldError("request", "holds a character the database cannot store (a NUL)")],
        )


class DuplicateLead(PortError):
    """A lead with the same email (compared case-insensitively) exists in the account."""

    code = "LEAD_EXISTS"

    def __init__(self, existing_lead_id: str) -> None:
        super().__init__("A lead with this email already exists in your lead database")
        self.existing_lead_id = existing_lead_id
