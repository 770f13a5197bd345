"""Examples for the OpenAPI document: every request body, every success and every error.

Made by the code that answers, from one set of sample domain objects: the wire structs'
``of`` for successes, the error handlers (errors.py) for failures. So an example cannot
show a field the server does not send, or a message in another shape than the server's.
(The success messages are written here as the controllers write them; tests/api holds them
to the real answers.)
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from litestar import Response
from litestar.openapi.spec import (
    Example,
    OpenAPIMediaType,
    OpenAPIResponse,
    Operation,
    Reference,
    RequestBody,
)

from leadmail.adapters.http import campaign_examples, envelopes, samples
from leadmail.adapters.http.action_schemas import LeadActionCountOut, LeadActionOut
from leadmail.adapters.http.error_table import (
    BY_CLASS,
    HEADERS_TOO_LARGE,
    INTERNAL_ERROR,
    MALFORMED_JSON,
    METHOD_NOT_ALLOWED,
    PAYLOAD_TOO_LARGE,
    ErrorKind,
    head_too_large,
)
from leadmail.adapters.http.errors import TOO_LARGE, answer_to, envelope, internal_error
from leadmail.adapters.http.import_schemas import (
    ImportErrorOut,
    ImportErrorPageOut,
    ImportOut,
    ImportPageOut,
)
from leadmail.adapters.http.schemas import (
    CountOut,
    DeletedOut,
    LeadOut,
    LeadPageOut,
    MessageOut,
    MessagePageOut,
    MessagesOut,
)
from leadmail.adapters.http.suppression_schemas import (
    RemovedOut,
    SuppressionOut,
    SuppressionPageOut,
)
from leadmail.adapters.http.template_schemas import PreviewOut, TemplateOut, TemplateVersionsOut
from leadmail.adapters.http.timeline_schemas import TimelineOut
from leadmail.domain.email import SenderNotAllowed
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
from leadmail.domain.lead_actions import ActionNotFound
from leadmail.domain.lead_imports import ImportNotFound
from leadmail.domain.lead_listing import LeadPage, PageCursor
from leadmail.domain.lead_timeline import created, merged, of_event, of_message, tags_changed
from leadmail.domain.quotas import QuotaExceeded
from leadmail.domain.suppressions import RecipientSuppressed, SuppressionNotFound, encode_cursor
from leadmail.domain.tags import TagChange
from leadmail.domain.template_drafts import TemplateExists, TemplateInUse, TemplateReadOnly
from leadmail.ports.errors import DuplicateLead, StorageUnavailable
from leadmail.ports.request_limits import Allowance, RateLimited
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable
from leadmail.services.templates import TemplateView

# --- successes, by operation id -----------------------------------------------------

_LEAD_OUT = LeadOut.of(samples.LEAD)
_OPEN_DAY = TemplateOut.of(TemplateView.of(samples.OPEN_DAY, samples.LAYOUT))
_TEMPLATES = [
    TemplateOut.of(TemplateView.of(samples.TEMPLATE, None)),
    TemplateOut.of(TemplateView.of(samples.LAYOUT, None)),
    _OPEN_DAY,
]
_RUNNING_AT = samples.AT.replace(minute=31)
_MINUTE = timedelta(minutes=1)
SUCCESSES: dict[str, msgspec.Struct | str] = {
    "listTemplates": envelopes.TemplateListEnvelope.of("Templates retrieved", _TEMPLATES),
    "listTemplatesAlias": envelopes.TemplateListEnvelope.of("Templates retrieved", _TEMPLATES),
    "createTemplate": envelopes.TemplateEnvelope.of(
        "Template created",
        TemplateOut.of(
            TemplateView.of(
                dataclasses.replace(
                    samples.OPEN_DAY, version=1, updated_at=samples.AT, layout_id=None
                ),
                None,
            )
        ),
    ),
    "getTemplate": envelopes.TemplateEnvelope.of("Template retrieved", _OPEN_DAY),
    "updateTemplate": envelopes.TemplateEnvelope.of("Template updated", _OPEN_DAY),
    "deleteTemplate": envelopes.DeletedTemplateEnvelope.of(
        "Template deleted", envelopes.DeletedTemplateOut(id="open-day")
    ),
    "listTemplateVersions": envelopes.TemplateVersionsEnvelope.of(
        "Template versions retrieved",
        TemplateVersionsOut([_OPEN_DAY], "2"),
    ),
    "getTemplateVersion": envelopes.TemplateEnvelope.of("Template version retrieved", _OPEN_DAY),
    "previewTemplate": envelopes.PreviewEnvelope.of(
        "Template previewed",
        PreviewOut(
            id="open-day",
            version=2,
            subject="Ada, come to our open day on {{date}}",
            html="<p>Hi Ada,</p><p>Our doors are open on {{date}}.</p>",
            text="Hi Ada,\n\nOur doors are open on {{date}}.",
            missing=["date"],
        ),
    ),
    "testTemplate": envelopes.MessageListEnvelope.of(
        "Email sent", MessagesOut([MessageOut.of(samples.TEST_MESSAGE)])
    ),
    "sendEmail": envelopes.MessageEnvelope.of("Email sent", MessageOut.of(samples.SENT)),
    "sendTemplateEmail": envelopes.MessageListEnvelope.of(
        "Email sent to 2 recipients",
        MessagesOut([MessageOut.of(m) for m in samples.SENT_FROM_TEMPLATE]),
    ),
    "getMessage": envelopes.MessageEnvelope.of(
        "Message retrieved", MessageOut.of(samples.DELIVERED, samples.DELIVERED_EVENTS)
    ),
    "listMessages": envelopes.MessagePageEnvelope.of(
        "Messages retrieved",
        MessagePageOut(
            [MessageOut.of(samples.DELIVERED, samples.DELIVERED_EVENTS)],
            PageCursor(samples.DELIVERED.created_at, samples.DELIVERED.message_id).encode(),
        ),
    ),
    "listLeads": envelopes.LeadPageEnvelope.of(
        "Leads retrieved",
        LeadPageOut.of(
            LeadPage(
                [samples.LEAD], PageCursor(samples.LEAD.created_at, samples.LEAD.lead_id).encode()
            )
        ),
    ),
    "addLead": envelopes.LeadEnvelope.of("Lead added", _LEAD_OUT),
    "getLead": envelopes.LeadEnvelope.of("Lead retrieved", _LEAD_OUT),
    "getLeadTimeline": envelopes.TimelineEnvelope.of(
        "Timeline retrieved",
        TimelineOut.of(
            samples.LEAD.lead_id,
            merged(
                [
                    of_event(
                        tags_changed(
                            dataclasses.replace(
                                samples.LEAD, updated_at=samples.LEAD.updated_at + _MINUTE
                            ),
                            TagChange(add=("open-day",), remove=("prospect",)),
                        )
                    ),
                    of_message(samples.DELIVERED, samples.DELIVERED_EVENTS),
                    created(samples.LEAD),
                ],
                None,
                10,
            ),
        ),
    ),
    "countLeads": envelopes.LeadCountEnvelope.of("Leads counted", CountOut(count=1)),
    "updateLead": envelopes.LeadEnvelope.of(
        "Lead updated",
        LeadOut.of(
            dataclasses.replace(
                samples.LEAD,
                note="Enrolled in the March cohort",
                tags=("march-cohort",),
                fields=samples.UPDATED_FIELDS,
                updated_at=samples.AT.replace(hour=11),
            )
        ),
    ),
    "changeLeadTags": envelopes.LeadEnvelope.of(
        "Tags changed",
        LeadOut.of(
            dataclasses.replace(
                samples.LEAD,
                tags=("evening", "march-cohort"),
                updated_at=samples.AT.replace(hour=11),
            )
        ),
    ),
    "deleteLead": envelopes.DeletedLeadEnvelope.of(
        "Lead deleted", DeletedOut(lead_id=samples.LEAD.lead_id)
    ),
    "importLeads": envelopes.ImportEnvelope.of(
        "Import queued", ImportOut.of(samples.IMPORT, samples.AT)
    ),
    "listLeadImports": envelopes.ImportPageEnvelope.of(
        "Imports retrieved",
        ImportPageOut(
            [ImportOut.of(samples.IMPORT_RUNNING, _RUNNING_AT)],
            PageCursor(
                samples.IMPORT_RUNNING.created_at, samples.IMPORT_RUNNING.import_id
            ).encode(),
        ),
    ),
    "getLeadImport": envelopes.ImportEnvelope.of(
        "Import retrieved", ImportOut.of(samples.IMPORT_RUNNING, _RUNNING_AT)
    ),
    "startLeadAction": envelopes.LeadActionEnvelope.of(
        "Bulk action queued", LeadActionOut.of(samples.ACTION, samples.AT)
    ),
    "startLeadAction:200": envelopes.LeadActionCountEnvelope.of(
        "Dry run: nothing done", LeadActionCountOut.of(samples.ACTION_ORDER, 42_000)
    ),
    "getLeadAction": envelopes.LeadActionEnvelope.of(
        "Bulk action retrieved", LeadActionOut.of(samples.ACTION_RUNNING, _RUNNING_AT)
    ),
    "listLeadImportErrors": envelopes.ImportErrorPageEnvelope.of(
        "Import errors retrieved",
        ImportErrorPageOut([ImportErrorOut.of(e) for e in samples.IMPORT_ERRORS], "230"),
    ),
    "exportLeads": samples.EXPORT_CSV,
    "listSuppressions": envelopes.SuppressionPageEnvelope.of(
        "Suppressions retrieved",
        SuppressionPageOut(
            [SuppressionOut.of(e) for e in samples.SUPPRESSIONS],
            encode_cursor(samples.SUPPRESSIONS[-1]),
        ),
    ),
    "addSuppression": envelopes.SuppressionEnvelope.of(
        "Suppression added", SuppressionOut.of(samples.SUPPRESSIONS[0])
    ),
    "addSuppression:200": envelopes.SuppressionEnvelope.of(
        "Already suppressed", SuppressionOut.of(samples.SUPPRESSIONS[0])
    ),
    "removeSuppression": envelopes.SuppressionRemovedEnvelope.of(
        "Suppression removed", RemovedOut(email="former.student@example.com")
    ),
    **campaign_examples.SUCCESSES,
}

# --- failures -----------------------------------------------------------------------


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
    "TEMPLATE_READ_ONLY": TemplateReadOnly("welcome"),
    "TEMPLATE_EXISTS": TemplateExists("open-day", predefined=False),
    "TEMPLATE_IN_USE": TemplateInUse("open-day", ["cmp_Hq7Rt2Kx9Lm4Vb8Nc3Pw6A"], "campaigns"),
    "MESSAGE_NOT_FOUND": MessageNotFound("msg_Vb7Qw2Lr9TzK4mXc8HnP1A"),
    "IMPORT_NOT_FOUND": ImportNotFound(samples.IMPORT.import_id),
    "ACTION_NOT_FOUND": ActionNotFound(samples.ACTION.action_id),
    "LEAD_EXISTS": DuplicateLead(samples.LEAD.lead_id),
    "IDEMPOTENCY_KEY_REUSED": IdempotencyKeyReused(),
    "IDEMPOTENCY_IN_PROGRESS": IdempotencyInProgress(),
    "STORAGE_UNAVAILABLE": StorageUnavailable(),
    "RATE_LIMITED": RateLimited(Allowance(False, 1200, 0, 2.4), "for this API key"),
    "QUOTA_EXCEEDED": QuotaExceeded(
        500, 3, 1, datetime(2026, 3, 4, tzinfo=UTC), datetime(2026, 3, 3, 21, 30, tzinfo=UTC)
    ),
    "RECIPIENT_SUPPRESSED": RecipientSuppressed(["ada@example.com"]),
    "SUPPRESSION_NOT_FOUND": SuppressionNotFound("ada@example.com"),
    **campaign_examples.RAISED,
}
_SENDS: dict[type[Any], LeadmailError] = {
    envelopes.SendRejectedEnvelope: samples.failed_send(per_recipient=False, unavailable=False),
    envelopes.SendUnavailableEnvelope: samples.failed_send(per_recipient=False, unavailable=True),
    envelopes.TemplateSendRejectedEnvelope: samples.failed_send(
        per_recipient=True, unavailable=False
    ),
    envelopes.TemplateSendUnavailableEnvelope: samples.failed_send(
        per_recipient=True, unavailable=True
    ),
}
# The failures the framework meets before a service does.
_FRAMEWORK: dict[ErrorKind, Response[Any]] = {
    MALFORMED_JSON: envelope(MALFORMED_JSON, "Input data was truncated"),
    METHOD_NOT_ALLOWED: envelope(
        METHOD_NOT_ALLOWED,
        "DELETE is not allowed on /api/v1/email/templates",
        headers={"Allow": "GET, OPTIONS, POST"},
    ),
    PAYLOAD_TOO_LARGE: envelope(PAYLOAD_TOO_LARGE, TOO_LARGE),
    # (connections.py answers it, before the app; the same words)
    HEADERS_TOO_LARGE: envelope(HEADERS_TOO_LARGE, head_too_large()),
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


# --- in the document ------------------------------------------------------------------


class VerbatimExample(Example):
    """An example whose value is written as given. Litestar leaves every None out of what it
    writes, values of examples included; an example must show the nulls the server sends."""

    def to_schema(self) -> dict[str, Any]:
        schema = super().to_schema()
        schema["value"] = self.value
        return schema


class VerbatimExampleMedia(OpenAPIMediaType):
    """A media object whose ``example`` is written as given (see VerbatimExample)."""

    def to_schema(self) -> dict[str, Any]:
        schema = super().to_schema()
        schema["example"] = self.example
        return schema


def _with_example(media: OpenAPIMediaType, example: Any) -> VerbatimExampleMedia:
    return VerbatimExampleMedia(schema=media.schema, example=example, encoding=media.encoding)


def state_examples(operation: Operation, requests: dict[str, Any]) -> None:
    """The request body's example (by its component) and the success's (by operation)."""
    body = operation.request_body
    if isinstance(body, RequestBody):
        for kind, media in body.content.items():
            if isinstance(media.schema, Reference):
                body.content[kind] = _with_example(media, requests[media.schema.ref])
    for status, ok in (operation.responses or {}).items():
        if (
            status.startswith("2")
            and isinstance(ok, OpenAPIResponse)
            and ok.content
            and operation.operation_id
        ):
            # An operation's second success (addSuppression's 200) by "<id>:<status>".
            named = f"{operation.operation_id}:{status}"
            found = success(named if named in SUCCESSES else operation.operation_id)
            for kind, media in ok.content.items():
                ok.content[kind] = _with_example(media, found)
