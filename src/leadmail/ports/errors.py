"""Errors an adapter raises through a port, translated from its driver's own."""

from __future__ import annotations

from leadmail.domain.errors import LeadmailError


class PortError(LeadmailError):
    code = "PORT_ERROR"


class StorageUnavailable(PortError):
    """The database cannot be reached or is too busy. Safe to retry later."""

    code = "STORAGE_UNAVAILABLE"

    def __init__(self, message: str = "The database is unavailable; retry shortly") -> None:
        super().__init__(message)


class DuplicateLead(PortError):
    """A lead with the same email (compared case-insensitively) exists in the account."""

    code = "LEAD_EXISTS"

    def __init__(self, existing_lead_id: str) -> None:
        super().__init__("A lead with this email already exists in your lead database")
        self.existing_lead_id = existing_lead_id
