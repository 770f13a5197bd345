"""Each operation's own error responses, from the error table: the statuses it can answer,
each with its description (the codes it means there), its typed envelope and an example of
each code (the error handlers' own answer to a sample failure)."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from litestar.openapi import ResponseSpec

from leadmail.adapters.http import examples
from leadmail.adapters.http.envelopes import (
    ErrorEnvelope,
    InternalErrorEnvelope,
    LeadExistsEnvelope,
    QuotaExceededEnvelope,
    RefusedEnvelope,
    TooManyEnvelope,
    ValidationErrorEnvelope,
)
from leadmail.adapters.http.error_table import (
    BY_CLASS,
    HEADERS_TOO_LARGE,
    INTERNAL_ERROR,
    MALFORMED_JSON,
    PAYLOAD_TOO_LARGE,
    ErrorKind,
)
from leadmail.domain.errors import LeadmailError, Unauthorized, ValidationFailed
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.request_limits import RateLimited

# What every operation can answer: a bad key, a query parameter it does not take or an id
# of the wrong shape (query_names.py, path_ids.py), a key over its budget (budgets.py),
# headers too large (connections.py), a bug, the database away.
_EVERYWHERE = (
    BY_CLASS[Unauthorized],
    BY_CLASS[ValidationFailed],
    BY_CLASS[RateLimited],
    HEADERS_TOO_LARGE,
    INTERNAL_ERROR,
    BY_CLASS[StorageUnavailable],
)
# What an operation with a JSON body can answer besides.
_WITH_BODY = (MALFORMED_JSON, PAYLOAD_TOO_LARGE)
# Codes whose envelope carries typed ``data`` (the send failures' depends on the operation).
_DATA = {
    "VALIDATION_FAILED": ValidationErrorEnvelope,
    "LEAD_EXISTS": LeadExistsEnvelope,
    "INTERNAL_ERROR": InternalErrorEnvelope,
    "QUOTA_EXCEEDED": QuotaExceededEnvelope,
}


def error_responses(
    *errors: type[LeadmailError],
    body: bool = False,
    upload: bool = False,
    sends: tuple[type[Any], type[Any]] | None = None,
) -> dict[int, ResponseSpec]:
    """The error responses of one operation: those it declares (``errors``), those of a
    JSON body, and those of every operation. ``sends``: the envelopes of its send
    failures, refused (502) and unavailable (503). ``upload``: a file body (not JSON),
    which can be too large."""
    kinds = [
        *_EVERYWHERE,
        *(_WITH_BODY if body else ()),
        *((PAYLOAD_TOO_LARGE,) if upload else ()),
        *(BY_CLASS[e] for e in errors),
    ]
    by_status: dict[int, list[ErrorKind]] = {}
    for kind in kinds:
        if kind not in by_status.setdefault(kind.status, []):
            by_status[kind.status].append(kind)
    return {
        status: ResponseSpec(
            data_container=_envelope(found, sends),
            description=describe(found),
            generate_examples=False,
            examples=[
                examples.VerbatimExample(
                    id=kind.code, summary=kind.when, value=examples.failure(kind, sends)
                )
                for kind in sorted(found, key=operator.attrgetter("code"))
            ],
        )
        for status, found in sorted(by_status.items())
    }


def describe(kinds: Iterable[ErrorKind]) -> str:
    """What a status means for an operation, code by code."""
    ordered = sorted(kinds, key=operator.attrgetter("code"))
    return "; ".join(f"`{kind.code}`: {kind.when}" for kind in ordered)


def _envelope(kinds: list[ErrorKind], sends: tuple[type[Any], type[Any]] | None) -> type[Any]:
    data: dict[str, type[Any]] = dict(_DATA)
    if sends is not None:
        data["PROVIDER_REJECTED"], data["PROVIDER_UNAVAILABLE"] = sends
    typed = {data[kind.code] for kind in kinds if kind.code in data}
    if not typed:
        return ErrorEnvelope
    if typed == {ValidationErrorEnvelope} and len(kinds) > 1:
        return RefusedEnvelope  # VALIDATION_FAILED beside a code without data
    if typed == {QuotaExceededEnvelope} and len(kinds) > 1:
        return TooManyEnvelope  # QUOTA_EXCEEDED beside RATE_LIMITED
    if len(typed) > 1 or (len(kinds) > 1 and sends is not None and sends[1] not in typed):
        # Only a send's 503 data is optional (absent when the database failed).
        codes = ", ".join(kind.code for kind in kinds)
        raise TypeError(f"one status, several shapes of data: {codes}")
    return typed.pop()
