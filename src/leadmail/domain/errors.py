"""The error tree every layer raises and the HTTP adapter maps, in one table, to statuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


class LeadmailError(Exception):
    """Base of every failure the service knows how to explain to a client.

    ``code`` is a stable machine-readable name; ``message`` is for humans.
    """

    code: ClassVar[str] = "ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DomainError(LeadmailError):
    """A business rule said no."""

    code = "DOMAIN_ERROR"


@dataclass(frozen=True, slots=True)
class FieldError:
    """What is wrong with one field. ``message`` reads after the field's name, as the
    rest of a sentence: ``email`` "is not a valid email address: ...", ``body`` "is
    empty: ...", so that ``str()`` of it is one sentence wherever it is shown."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"`{self.field}` {self.message}"


class ValidationFailed(DomainError):
    """One or more fields broke a rule. Every broken field is listed."""

    code = "VALIDATION_FAILED"

    def __init__(self, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("ValidationFailed needs at least one FieldError")
        self.errors = tuple(errors)
        super().__init__(f"Invalid request: {self.described}")

    @property
    def described(self) -> str:
        """Every broken field, one sentence each, joined by `; `."""
        return "; ".join(map(str, self.errors))

    @classmethod
    def one(cls, field: str, message: str) -> ValidationFailed:
        return cls([FieldError(field, message)])


class Unauthorized(DomainError):
    """The credentials are missing, malformed, unknown or revoked."""

    code = "UNAUTHORIZED"


class LeadNotFound(DomainError):
    """No lead with that id in the caller's account (another account's lead included)."""

    code = "LEAD_NOT_FOUND"

    def __init__(self, lead_id: str) -> None:
        super().__init__(f"Lead {lead_id!r} was not found")
        self.lead_id = lead_id


class ApiKeyNotFound(DomainError):
    code = "API_KEY_NOT_FOUND"

    def __init__(self, key_id: str) -> None:
        super().__init__(f"API key {key_id!r} was not found")
        self.key_id = key_id


class TemplateNotFound(DomainError):
    code = "TEMPLATE_NOT_FOUND"

    def __init__(self, template_id: str, version: int | None = None) -> None:
        if version is None:
            super().__init__(f"Template {template_id!r} was not found")
        else:
            super().__init__(f"Template {template_id!r} has no version {version}")
        self.template_id = template_id


class MessageNotFound(DomainError):
    code = "MESSAGE_NOT_FOUND"

    def __init__(self, message_id: str) -> None:
        super().__init__(f"Message {message_id!r} was not found")
        self.message_id = message_id
