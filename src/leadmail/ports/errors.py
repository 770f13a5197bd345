"""Errors an adapter raises through a port, translated from its driver's own."""

from __future__ import annotations

from leadmail.domain.errors import FieldError, LeadmailError, ValidationFailed


class PortError(LeadmailError):
    code = "PORT_ERROR"


class StorageUnavailable(PortError):
    """The database cannot be reached or is too busy. Safe to retry later."""

    code = "STORAGE_UNAVAILABLE"

    def __init__(self, message: str = "The database is unavailable; retry shortly") -> None:
        super().__init__(message)


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
