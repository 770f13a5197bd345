"""Examples for the OpenAPI document: every request body, every success and every error.

Made by the code that answers, from one set of sample domain objects: the wire structs'
``of`` for successes, the error handlers (errors.py) for failures. So an example cannot
show a field the server does not send, or a message in another shape than the server's.
(The success messages are written here as the controllers write them; tests/api holds them
to the real answers.)
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import msgspec
from litestar import Response

from leadmail.adapters.http import envelopes, schemas
from leadmail.adapters.http.error_table import (
    BY_CLASS,
    INTERNAL_ERROR,
    MALFORMED_JSON,
    METHOD_NOT_ALLOWED,
    PAYLOAD_TOO_LARGE,
    ErrorKind,
)
from leadmail.adapters.http.errors import TOO_LARGE, answer_to, envelope, internal_error
from leadmail.adapters.http.schemas import (
    DeletedOut,
    LeadOut,
    LeadPageOut,
    MessageOut,
    MessagesOut,
    TemplateOut,
)
from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Message, MessageStatus, SenderNotAllowed
from leadmail.domain.errors import (
    FieldError,
    LeadmailError,
    LeadNotFound,
    MessageNotFound,
    TemplateNotFound,
    Unauthorized,
    ValidationFailed,
)
from leadmail.domain.idempotency import IdempotencyInProgress, IdempotencyKeyReused
from leadmail.domain.lead_listing import LeadPage, PageCursor
from leadmail.domain.leads import Lead
from leadmail.domain.templates import Template
from leadmail.ports.errors import DuplicateLead, StorageUnavailable
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable, SendResult

_AT = datetime(2026, 3, 2, 9, 30, 15, 123000, tzinfo=UTC)
_ACCOUNT = "acc_Xq3T9mRk2LpW8vNb"
_SENDER = "admissions@northwind.example.com"

_LEAD = Lead(
    lead_id="ld_3kTMd9PqW7bXo2vL1cYh8A",
    account_id=_ACCOUNT,
    name="Ada Lovelace",
    email="ada@example.com",
    source="open-day",
    note="Asked about the March cohort",
    phone="+44 20 7946 0958",
    created_at=_AT,
    updated_at=_AT,
)
_TEMPLATE = Template(
    template_id="welcome",
    name="Welcome",
    subject="Welcome to {{school_name}}, {{first_name}}",
    body=(
        "<p>Hi {{first_name}},</p><p>Browse our courses at"
        ' <a href="{{courses_link}}">{{courses_link}}</a>, or write to {{contact_email}}.</p>'
    ),
    created_at=_AT,
)


def _message(
    to: str,
    status: MessageStatus,
    *,
    template: bool = False,
    number: int = 1,
    error: str = "",
    attempts: int = 1,
) -> Message:
    return Message(
        message_id=f"msg_Vb7Qw2Lr9TzK4mXc8HnP{number}A",
        account_id=_ACCOUNT,
        sender=_SENDER,
        to=(to,),
        subject="Welcome to Northwind Academy, Ada" if template else "Your open day place",
        template_id="welcome" if template else None,
        status=status,
        provider="resend",
        provider_message_id=(
            f"4ef9a417-02e9-4d39-ad75-9611e0fcc33{number}" if status is MessageStatus.SENT else None
        ),
        attempts=attempts,
        last_error=error,
        created_at=_AT,
        updated_at=_AT,
    )


_SENT = _message("ada@example.com", MessageStatus.SENT)
_SENT_FROM_TEMPLATE = [
    _message("ada@example.com", MessageStatus.SENT, template=True, number=1),
    _message("grace@example.com", MessageStatus.SENT, template=True, number=2),
]

# --- request bodies, by wire class --------------------------------------------------

_WELCOME_VARIABLES = {
    "school_name": "Northwind Academy",
    "first_name": "Ada",
    "courses_link": "https://northwind.example.com/courses",
    "contact_email": "hello@northwind.example.com",
}
REQUESTS: dict[type[Any], dict[str, Any]] = {
    schemas.LeadIn: {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "source": "open-day",
        "note": "Asked about the March cohort",
        "phone": "+44 20 7946 0958",
    },
    schemas.LeadPatchIn: {"note": "Enrolled in the March cohort"},
    schemas.SendEmailIn: {
        "to": "ada@example.com",
        "subject": "Your open day place",
        "html": "<p>See you on Saturday at 10:00.</p>",
        "from": _SENDER,
    },
    schemas.SendTemplateIn: {
        "to": ["ada@example.com", "grace@example.com"],
        "template_id": "welcome",
        "variables": _WELCOME_VARIABLES,
        "from": _SENDER,
    },
}

# --- successes, by operation id -----------------------------------------------------

_LEAD_OUT = LeadOut.of(_LEAD)
SUCCESSES: dict[str, msgspec.Struct] = {
    "listTemplates": envelopes.TemplateListEnvelope.of(
        "Templates retrieved", [TemplateOut.of(_TEMPLATE)]
    ),
    "listTemplatesAlias": envelopes.TemplateListEnvelope.of(
        "Templates retrieved", [TemplateOut.of(_TEMPLATE)]
    ),
    "sendEmail": envelopes.MessageEnvelope.of("Email sent", MessageOut.of(_SENT)),
    "sendTemplateEmail": envelopes.MessageListEnvelope.of(
        "Email sent to 2 recipients",
        MessagesOut([MessageOut.of(m) for m in _SENT_FROM_TEMPLATE]),
    ),
    "getMessage": envelopes.MessageEnvelope.of("Message retrieved", MessageOut.of(_SENT)),
    "listLeads": envelopes.LeadPageEnvelope.of(
        "Leads retrieved",
        LeadPageOut.of(LeadPage([_LEAD], PageCursor(_LEAD.created_at, _LEAD.lead_id).encode())),
    ),
    "addLead": envelopes.LeadEnvelope.of("Lead added", _LEAD_OUT),
    "getLead": envelopes.LeadEnvelope.of("Lead retrieved", _LEAD_OUT),
    "updateLead": envelopes.LeadEnvelope.of(
        "Lead updated",
        LeadOut.of(
            dataclasses.replace(
                _LEAD, note="Enrolled in the March cohort", updated_at=_AT.replace(hour=11)
            )
        ),
    ),
    "deleteLead": envelopes.DeletedLeadEnvelope.of(
        "Lead deleted", DeletedOut(lead_id=_LEAD.lead_id)
    ),
}

# --- failures -----------------------------------------------------------------------


def _failed_send(*, per_recipient: bool, unavailable: bool) -> LeadmailError:
    """A send the provider refused, or could not take in three tries."""
    cause = (
        ProviderUnavailable("no answer within 10 s")
        if unavailable
        else ProviderRejected(422, "The 'to' address is not a valid mailbox")
    )
    failed = _message(
        "grace@example.com",
        MessageStatus.FAILED,
        template=per_recipient,
        number=2,
        error=cause.message,
        attempts=3 if unavailable else 1,
    )
    messages = [_SENT_FROM_TEMPLATE[0], failed] if per_recipient else [failed]
    result = SendResult(messages, {failed.message_id: cause}, per_recipient=per_recipient)
    failure = result.failure
    assert failure is not None
    return failure


# One failure the service raises, per code; the send failures by the envelope they travel in.
_RAISED: dict[str, LeadmailError] = {
    "VALIDATION_FAILED": ValidationFailed(
        [FieldError("email", "is not a valid email address: An email address must have an @-sign.")]
    ),
    "UNAUTHORIZED": Unauthorized("The API key is not recognised"),
    "SENDER_NOT_ALLOWED": SenderNotAllowed(
        "Sending from the domain 'gmail.com' is not allowed on this service"
    ),
    "LEAD_NOT_FOUND": LeadNotFound("ld_3kTMd9PqW7bXo2vL1cYh8A"),
    "TEMPLATE_NOT_FOUND": TemplateNotFound("welcom"),
    "MESSAGE_NOT_FOUND": MessageNotFound("msg_Vb7Qw2Lr9TzK4mXc8HnP1A"),
    "LEAD_EXISTS": DuplicateLead(_LEAD.lead_id),
    "IDEMPOTENCY_KEY_REUSED": IdempotencyKeyReused(),
    "IDEMPOTENCY_IN_PROGRESS": IdempotencyInProgress(),
    "STORAGE_UNAVAILABLE": StorageUnavailable(),
}
_SENDS: dict[type[Any], LeadmailError] = {
    envelopes.SendRejectedEnvelope: _failed_send(per_recipient=False, unavailable=False),
    envelopes.SendUnavailableEnvelope: _failed_send(per_recipient=False, unavailable=True),
    envelopes.TemplateSendRejectedEnvelope: _failed_send(per_recipient=True, unavailable=False),
    envelopes.TemplateSendUnavailableEnvelope: _failed_send(per_recipient=True, unavailable=True),
}
# The failures the framework meets before a service does.
_FRAMEWORK: dict[ErrorKind, Response[Any]] = {
    MALFORMED_JSON: envelope(MALFORMED_JSON, "Input data was truncated"),
    METHOD_NOT_ALLOWED: envelope(
        METHOD_NOT_ALLOWED,
        "DELETE is not allowed on /api/v1/email/templates",
        headers={"Allow": "GET, OPTIONS"},
    ),
    PAYLOAD_TOO_LARGE: envelope(PAYLOAD_TOO_LARGE, TOO_LARGE),
    INTERNAL_ERROR: internal_error("req_7fK2pQ9sLm3xV8bN"),
}


def failure(kind: ErrorKind, sends: tuple[type[Any], type[Any]] | None) -> Any:
    """The answer to one kind of failure, as JSON data. ``sends``: the operation's send
    failure envelopes, rejected and unavailable (their ``data`` differs by operation)."""
    if kind in _FRAMEWORK:
        answer = _FRAMEWORK[kind]
    else:
        raised = _RAISED.get(kind.code)
        if sends is not None and kind is BY_CLASS[DeliveryRejected]:
            raised = _SENDS[sends[0]]
        elif sends is not None and kind is BY_CLASS[DeliveryUnavailable]:
            raised = _SENDS[sends[1]]
        found = None if raised is None else answer_to(raised)
        if found is None:
            raise LookupError(f"no example of {kind.code}")
        answer = found
    return msgspec.to_builtins(answer.content)


def success(operation_id: str) -> Any:
    return msgspec.to_builtins(SUCCESSES[operation_id])
