"""What travels on the wire: msgspec Structs, and their conversion from domain types."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

from leadmail.domain.clock import to_iso
from leadmail.domain.leads import Lead, LeadPage

T = TypeVar("T")


class Envelope(msgspec.Struct, Generic[T]):
    """Every successful response: HTTP 200, ``success: true``, ``error: ""``."""

    success: bool
    message: str
    error: str
    data: T


class ErrorEnvelope(msgspec.Struct, omit_defaults=True):
    """Every failed response: a non-200 status, ``success: false`` and a human ``error``.

    ``code`` is a stable machine-readable name; ``data`` carries details where there are
    any (the fields that failed validation, the id of the lead that already exists, the
    request id of an unexpected error)."""

    success: bool
    message: str
    error: str
    code: str
    data: dict[str, Any] | None = None


def ok(message: str, data: T) -> Envelope[T]:
    return Envelope(success=True, message=message, error="", data=data)


class LeadIn(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    email: str
    source: str = ""
    note: str = ""


class LeadPatchIn(msgspec.Struct, forbid_unknown_fields=True):
    """Any subset of the client fields; omitted ones stay as they are."""

    name: str | msgspec.UnsetType = msgspec.UNSET
    email: str | msgspec.UnsetType = msgspec.UNSET
    source: str | msgspec.UnsetType = msgspec.UNSET
    note: str | msgspec.UnsetType = msgspec.UNSET


class LeadOut(msgspec.Struct):
    lead_id: str
    name: str
    email: str
    source: str
    note: str
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, lead: Lead) -> LeadOut:
        return cls(
            lead_id=lead.lead_id,
            name=lead.name,
            email=lead.email,
            source=lead.source,
            note=lead.note,
            created_at=to_iso(lead.created_at),
            updated_at=to_iso(lead.updated_at),
        )


class LeadPageOut(msgspec.Struct):
    items: list[LeadOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: LeadPage) -> LeadPageOut:
        return cls(items=[LeadOut.of(lead) for lead in page.leads], next_cursor=page.next_cursor)


class AllowedOut(msgspec.Struct):
    methods: list[str]


class DeletedOut(msgspec.Struct):
    lead_id: str


def unset_to_none(value: str | msgspec.UnsetType) -> str | None:
    return None if isinstance(value, msgspec.UnsetType) else value
